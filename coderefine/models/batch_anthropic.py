"""Anthropic's Message Batches API: ``messages.batches.create`` / ``retrieve`` / ``results``.

Each request is the same ``messages.create`` body a direct call sends (``anthropic.request_params``), so a
batch answer reads like a direct one; results come back in any order and are matched by ``custom_id``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from coderefine.models.anthropic import AnthropicModel
from coderefine.models.base import ModelRequest
from coderefine.models.batch_api import BatchStatus, Failure, Outcome
from coderefine.models.sdk_errors import translate_errors

# Error types that a second try cannot mend: the request itself is refused.
_FINAL = {
    "invalid_request_error",
    "authentication_error",
    "permission_error",
    "not_found_error",
    "request_too_large",
    "billing_error",
}


class AnthropicBatches:
    def __init__(self, model: AnthropicModel) -> None:
        self._model = model

    @property
    def name(self) -> str:
        return self._model.name

    def params(self, request: ModelRequest) -> dict[str, Any]:
        return self._model.params(request)

    def _batches(self) -> Any:
        return self._model.client().messages.batches

    def create(self, items: Sequence[tuple[str, dict[str, Any]]]) -> str:
        with translate_errors(self._model.sdk(), self._model.errors()):
            batch = self._batches().create(requests=[{"custom_id": c, "params": p} for c, p in items])
        return str(batch.id)

    def status(self, batch_id: str) -> BatchStatus:
        with translate_errors(self._model.sdk(), self._model.errors()):
            batch = self._batches().retrieve(batch_id)
        counts = batch.request_counts
        done = counts.succeeded + counts.errored + counts.canceled + counts.expired
        return BatchStatus(
            ended=batch.processing_status == "ended",
            done=done,
            total=done + counts.processing,
            state=str(batch.processing_status),
        )

    def results(self, batch_id: str, requests: Mapping[str, ModelRequest]) -> dict[str, Outcome]:
        found: dict[str, Outcome] = {}
        with translate_errors(self._model.sdk(), self._model.errors()):
            for item in self._batches().results(batch_id):
                if item.custom_id not in requests:
                    continue
                found[item.custom_id] = self._outcome(item.result)
        return found

    def _outcome(self, result: Any) -> Outcome:
        if result.type == "succeeded":
            return self._model.reply_of(result.message)
        if result.type == "errored":
            error = getattr(result.error, "error", None)
            kind = str(getattr(error, "type", "") or "error")
            return Failure(kind, str(getattr(error, "message", "") or kind), retryable=kind not in _FINAL)
        return Failure(str(result.type), f"the request was {result.type} before it was processed")
