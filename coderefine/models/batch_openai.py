"""OpenAI's Batch API: a JSON-lines file of ``/v1/chat/completions`` requests (``files.create``, purpose
``batch``), ``batches.create`` with a 24 h window, ``batches.retrieve``, and the answers read from
``files.content`` of the output file (successes, and requests the API answered with an error status) and of
the error file (requests that expired, were canceled or failed before an answer).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from coderefine.models.base import ModelRequest
from coderefine.models.batch_api import BatchStatus, Failure, Outcome
from coderefine.models.openai_chat import OpenAIChatModel, read_reply
from coderefine.models.sdk_errors import translate_errors

ENDPOINT = "/v1/chat/completions"
_ENDED = {"completed", "failed", "expired", "cancelled"}


class OpenAIBatches:
    def __init__(self, model: OpenAIChatModel) -> None:
        self._model = model

    @property
    def name(self) -> str:
        return self._model.name

    def params(self, request: ModelRequest) -> dict[str, Any]:
        return self._model.params(request)

    def create(self, items: Sequence[tuple[str, dict[str, Any]]]) -> str:
        lines = [json.dumps({"custom_id": c, "method": "POST", "url": ENDPOINT, "body": b}) for c, b in items]
        data = ("\n".join(lines) + "\n").encode("utf-8")
        client = self._model.client()
        with translate_errors(self._model.sdk(), self._model.errors()):
            upload = client.files.create(file=("coderefine-batch.jsonl", data), purpose="batch")
            batch = client.batches.create(input_file_id=upload.id, endpoint=ENDPOINT, completion_window="24h")
        return str(batch.id)

    def _retrieve(self, batch_id: str) -> Any:
        with translate_errors(self._model.sdk(), self._model.errors()):
            return self._model.client().batches.retrieve(batch_id)

    def status(self, batch_id: str) -> BatchStatus:
        batch = self._retrieve(batch_id)
        counts = batch.request_counts
        done = (counts.completed + counts.failed) if counts is not None else 0
        failed = ""
        if batch.status == "failed":
            errors = batch.errors.data if batch.errors is not None and batch.errors.data else []
            failed = "; ".join(f"{e.code}: {e.message}" for e in errors) or "the batch failed"
        return BatchStatus(
            ended=batch.status in _ENDED,
            done=done,
            total=counts.total if counts is not None else 0,
            state=str(batch.status),
            failed=failed,
        )

    def results(self, batch_id: str, requests: Mapping[str, ModelRequest]) -> dict[str, Outcome]:
        batch = self._retrieve(batch_id)
        found: dict[str, Outcome] = {}
        for file_id in (batch.output_file_id, batch.error_file_id):
            if not file_id:
                continue
            with translate_errors(self._model.sdk(), self._model.errors()):
                text = self._model.client().files.content(file_id).text
            for line in text.splitlines():
                if not line.strip():
                    continue
                item = json.loads(line)
                cid = item.get("custom_id")
                if cid in requests and cid not in found:
                    found[cid] = self._outcome(item, requests[cid])
        return found

    def _outcome(self, item: Mapping[str, Any], request: ModelRequest) -> Outcome:
        error = item.get("error")
        if error:
            code = str(error.get("code") or "error")
            # batch_expired, batch_cancelled and the like: the request itself was never answered.
            return Failure(code, str(error.get("message") or code))
        response = item.get("response") or {}
        status = int(response.get("status_code") or 0)
        body = response.get("body") or {}
        if status != 200:
            message = str((body.get("error") or {}).get("message") or f"status {status}")
            return Failure(f"status {status}", message, retryable=status == 429 or status >= 500)
        sdk = self._model.sdk()
        completion = sdk.types.chat.ChatCompletion.model_validate(body)
        return read_reply(self._model.spec, request, completion)
