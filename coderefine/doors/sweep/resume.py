"""Resuming a sweep: the key of a file's result, and an outcome read back from the cache."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from coderefine.config import Settings
from coderefine.doors.hook import PROTOCOL_VERSION, settings_key
from coderefine.doors.sweep.records import FileOutcome
from coderefine.models.roles import models_key
from coderefine.project.cache import cache_key
from coderefine.version import __version__


def file_key(settings: Settings, intent: str, path: str, on_disk: bytes, head_blob: str | None) -> str:
    """The resume key of one file: its bytes on disk and at HEAD (which make its change), the intent, the
    models and the settings that shape a review."""
    return cache_key(
        {
            "coderefine": __version__,
            "protocol": PROTOCOL_VERSION,
            "mode": "sweep",
            "model": models_key(settings),
            "intent": intent,
            "settings": settings_key(settings),
            "path": path,
            "after": hashlib.sha256(on_disk).hexdigest(),
            "head": head_blob,
        }
    )


def cached_outcome(path: str, hit: Mapping[str, object]) -> FileOutcome:
    status = hit.get("status")
    code = hit.get("exit_code")
    return FileOutcome(
        path,
        status if status in ("fixed", "unchanged", "findings") else "unchanged",
        code if isinstance(code, int) else 0,
        str(hit.get("detail") or ""),
        cached=True,
    )
