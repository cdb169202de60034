"""Record a run's model calls to a JSON-lines file, and answer a later run from such a file.

``--record FILE`` wraps the model in ``RecordingModel``; ``--model replay:FILE`` uses ``ReplayModel``.
Each line is one call: ``{"role", "fingerprint", "request", "reply"}``. A replay answers each request
with the first unused entry of the same role and the same fingerprint (a hash of everything the request
sends), else the first unused entry of the same role, so a run can be reproduced even when calls are
made concurrently or the code moved a little. No entry left for a role is a ReplayError.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from coderefine.errors import ReplayError
from coderefine.models.base import Model, ModelReply, ModelRequest, Usage, Wrapped


def fingerprint(request: ModelRequest) -> str:
    return hashlib.sha256(request.prompt_text().encode("utf-8")).hexdigest()[:16]


def request_data(request: ModelRequest) -> dict[str, Any]:
    return {
        "role": request.role,
        "max_tokens": request.max_tokens,
        "tool": request.tool.name if request.tool else None,
        "system": [{"text": b.text, "cache": b.cache} for b in request.system],
        "messages": [
            {"role": m.role, "blocks": [{"text": b.text, "cache": b.cache} for b in m.blocks]}
            for m in request.messages
        ],
    }


def reply_data(reply: ModelReply) -> dict[str, Any]:
    return {
        "text": reply.text,
        "tool_input": dict(reply.tool_input) if reply.tool_input is not None else None,
        "model": reply.model,
        "stop_reason": reply.stop_reason,
        **({"batch": True} if reply.batch else {}),
        "usage": {
            "input_tokens": reply.usage.input_tokens,
            "output_tokens": reply.usage.output_tokens,
            "cache_write_tokens": reply.usage.cache_write_tokens,
            "cache_read_tokens": reply.usage.cache_read_tokens,
        },
    }


def reply_from(data: Mapping[str, Any]) -> ModelReply:
    usage = data.get("usage") or {}
    return ModelReply(
        text=str(data.get("text") or ""),
        tool_input=data.get("tool_input"),
        model=str(data.get("model") or "replay"),
        stop_reason=str(data.get("stop_reason") or ""),
        usage=Usage(**{k: int(usage.get(k, 0)) for k in Usage.__dataclass_fields__}),
        batch=bool(data.get("batch", False)),
    )


def record_line(request: ModelRequest, reply: ModelReply) -> str:
    entry = {
        "role": request.role,
        "fingerprint": fingerprint(request),
        "request": request_data(request),
        "reply": reply_data(reply),
    }
    return json.dumps(entry, ensure_ascii=False) + "\n"


class RecordingModel(Wrapped):
    """Passes every call to ``inner`` and appends the request and reply to ``path``."""

    def __init__(self, inner: Model, path: Path) -> None:
        super().__init__(inner)
        self._path = path
        self._lock = threading.Lock()
        path.write_text("", encoding="utf-8")

    def complete(self, request: ModelRequest) -> ModelReply:
        reply = self._inner.complete(request)
        with self._lock, self._path.open("a", encoding="utf-8") as handle:
            handle.write(record_line(request, reply))
        return reply


class ReplayModel:
    """Answers requests from a recorded run."""

    def __init__(self, path: Path) -> None:
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise ReplayError(f"cannot read the replay file {path}: {exc.strerror}") from exc
        self._entries: list[dict[str, Any]] = []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                if not isinstance(entry.get("role"), str) or not isinstance(entry.get("reply"), dict):
                    raise KeyError("role or reply")
            except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
                raise ReplayError(f"{path}:{number}: not a recorded call ({exc})") from exc
            self._entries.append(entry)
        self._used = [False] * len(self._entries)
        self._lock = threading.Lock()
        self._path = path

    @property
    def name(self) -> str:
        return f"replay:{self._path.name}"

    def complete(self, request: ModelRequest) -> ModelReply:
        key = fingerprint(request)
        with self._lock:
            chosen = self._pick(request.role, key)
            if chosen is None:
                raise ReplayError(
                    f"{self._path} has no {request.role} reply left for this run; "
                    "record it again with --record"
                )
            self._used[chosen] = True
            return reply_from(self._entries[chosen]["reply"])

    def _pick(self, role: str, key: str) -> int | None:
        same_role = [i for i, e in enumerate(self._entries) if not self._used[i] and e["role"] == role]
        exact = [i for i in same_role if self._entries[i].get("fingerprint") == key]
        choices = exact or same_role
        return choices[0] if choices else None

    def remaining(self) -> int:
        return self._used.count(False)
