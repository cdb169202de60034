"""Choose the model a run asks for: ``replay:FILE`` or an Anthropic model name; optionally recorded."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from coderefine.config import Settings
from coderefine.models.base import Model

REPLAY_PREFIX = "replay:"


def make_model(
    spec: str,
    settings: Settings,
    environ: Mapping[str, str],
    *,
    record: Path | None = None,
    http_client: Any = None,
) -> Model:
    """The model for ``spec``; starts the SDK import in the background so it overlaps the signals."""
    model: Model
    if spec.startswith(REPLAY_PREFIX):
        from coderefine.models.replay import ReplayModel

        model = ReplayModel(Path(spec[len(REPLAY_PREFIX) :]))
    else:
        from coderefine.models.anthropic import AnthropicModel

        model = AnthropicModel(
            spec,
            environ=environ,
            timeout=settings.model_timeout,
            max_retries=settings.model_retries,
            http_client=http_client,
        )
    if record is not None:
        from coderefine.models.replay import RecordingModel

        model = RecordingModel(model, record)
    warm = getattr(model, "warm_up", None)
    if callable(warm):
        warm()
    return model
