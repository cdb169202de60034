"""Choose the models a run asks for: ``replay:FILE``, ``gguf:PATH`` (a server started for the run), or
``PROVIDER:MODEL`` (a bare name is Anthropic's), one per role when the roles differ; optionally recorded,
with progress on stderr during long calls.

No SDK is imported here: each provider's module imports its SDK lazily, in the background."""

from __future__ import annotations

import contextlib
import importlib
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from coderefine.config import Settings
from coderefine.errors import CoderefineError
from coderefine.models.base import Model, Role, warm_up
from coderefine.models.prices import price_of
from coderefine.models.providers import ModelSpec, parse_spec
from coderefine.models.roles import RoleModels, role_specs

if TYPE_CHECKING:
    from coderefine.models.batch import BatchRun

REPLAY_PREFIX = "replay:"


def provider_timeout(spec: ModelSpec, settings: Settings) -> float:
    """The provider's own ``timeout`` if configured, else ``model-timeout`` if set, else the preset's."""
    if "timeout" in (settings.providers.get(spec.provider.name) or {}):
        return spec.provider.timeout
    if "model_timeout" in settings.sources:
        return settings.model_timeout
    return spec.provider.timeout


def _single(spec_text: str, settings: Settings, environ: Mapping[str, str], http_client: Any) -> Model:
    if spec_text.startswith(REPLAY_PREFIX):
        from coderefine.models.replay import ReplayModel

        return ReplayModel(Path(spec_text[len(REPLAY_PREFIX) :]))
    spec = parse_spec(spec_text, settings.providers)
    price_of(spec.name, settings.prices)  # a bad price entry is an error now, not after the first call
    timeout = provider_timeout(spec, settings)
    if spec.provider.name == "gguf":
        from coderefine.models.local_model import gguf_model

        return gguf_model(spec, settings, environ, timeout=timeout, http_client=http_client)
    if spec.provider.family == "openai":
        from coderefine.models.openai_chat import OpenAIChatModel

        return OpenAIChatModel(
            spec,
            environ=environ,
            timeout=timeout,
            max_retries=settings.model_retries,
            http_client=http_client,
        )
    from coderefine.models.anthropic import AnthropicModel

    return AnthropicModel(
        spec.model,
        environ=environ,
        timeout=timeout,
        max_retries=settings.model_retries,
        http_client=http_client,
        platform=spec.provider.family,
        name=spec.name,
    )


def prefetch_sdks(settings: Settings) -> None:
    """Start importing the SDK of every model ``settings`` name, in background threads, before the
    models are made: a command that learns its settings before it reads the change gives the import (a
    second of CPU for the openai SDK's types, most of it while the first tests run) that much of a head
    start. Nothing is checked here (keys, prices): making the models does that, and its import then
    finds the module already loading. A name that does not parse is left to that moment too."""
    modules = set()
    for spec_text in role_specs(settings).values():
        if spec_text.startswith(REPLAY_PREFIX):
            continue
        try:
            spec = parse_spec(spec_text, settings.providers)
        except CoderefineError:
            continue
        if spec.provider.family == "anthropic":
            continue  # Anthropic's own API is called without its SDK (models/messages_http.py)
        modules.add(
            "openai" if spec.provider.family == "openai" or spec.provider.name == "gguf" else "anthropic"
        )
    for module in sorted(modules):
        if module not in sys.modules:
            threading.Thread(
                target=_import_quietly, args=(module,), name="coderefine-sdk-prefetch", daemon=True
            ).start()


def _import_quietly(name: str) -> None:
    with contextlib.suppress(Exception):  # making the model imports it again and says what is missing
        importlib.import_module(name)


def make_model(
    spec: str,
    settings: Settings,
    environ: Mapping[str, str],
    *,
    record: Path | None = None,
    http_client: Any = None,
    progress: TextIO | None = None,
    batch: BatchRun | None = None,
) -> Model:
    """The model for ``spec`` (every role); starts the SDK import in the background. With ``batch``, its
    calls go through the provider's batch API, gathered with those of every model made with that run."""
    return _finish(_wrap(_single(spec, settings, environ, http_client), progress, batch), record)


def make_role_model(
    settings: Settings,
    environ: Mapping[str, str],
    *,
    record: Path | None = None,
    http_client: Any = None,
    progress: TextIO | None = None,
    batch: BatchRun | None = None,
) -> Model:
    """The model of each role (``author-model``, ``critic-model``, ``reviser-model``, default ``model``):
    one model when they are all the same, else a ``RoleModels`` that sends each request to its role's."""
    made: dict[str, Model] = {}
    roles: dict[Role, Model] = {}
    for role, spec in role_specs(settings).items():
        if spec not in made:
            made[spec] = _wrap(_single(spec, settings, environ, http_client), progress, batch)
        roles[role] = made[spec]
    model = next(iter(made.values())) if len(made) == 1 else RoleModels(roles)
    return _finish(model, record)


def _wrap(model: Model, progress: TextIO | None, batch: BatchRun | None) -> Model:
    if batch is not None:
        # A batch reports its own progress (polls and counts); a heartbeat per call would only repeat it.
        return batch.wrap(model)
    if progress is None or model.name.startswith(REPLAY_PREFIX):
        return model
    from coderefine.models.heartbeat import Heartbeat

    return Heartbeat(model, progress)


def _finish(model: Model, record: Path | None) -> Model:
    if record is not None:
        from coderefine.models.replay import RecordingModel

        model = RecordingModel(model, record)
    warm_up(model)
    return model
