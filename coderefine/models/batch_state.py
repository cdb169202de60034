"""The batches a run has submitted, kept on disk so that a run interrupted while it waited picks up their
results instead of paying for the same requests again.

One JSON file beside the undo journal (``.git/coderefine/batches.json``, or ``.coderefine/`` outside git).
Each entry is a batch id, the model that answers it, when it was made, and the ``custom_id`` of each request
(a hash of what the request sends); ids handed to a caller are marked delivered, and a batch whose requests
are all delivered is dropped. The providers keep results for about a month; older entries are dropped too.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from coderefine.project.writes import Journal, atomic_write

STATE_FILE = "batches.json"
KEEP_SECONDS = 28 * 24 * 3600


def state_path(root: Path, git_dir: Path | None) -> Path:
    """Where a project's batch state lives: beside its undo journal."""
    return Journal.for_project(root, git_dir).folder.parent / STATE_FILE


class BatchStore:
    """The stored batches of one project (thread-safe; every change is written at once, atomically)."""

    def __init__(self, path: Path, *, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self._clock = clock
        self._lock = threading.Lock()

    def _read(self) -> list[dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            # No state yet, or a damaged file: nothing to resume (at worst a request is paid for twice).
            return []
        batches = data.get("batches") if isinstance(data, dict) else None
        return [b for b in batches or [] if isinstance(b, dict) and isinstance(b.get("id"), str)]

    def _write(self, batches: list[dict[str, Any]]) -> None:
        now = self._clock()
        kept = [b for b in batches if now - float(b.get("created", 0)) < KEEP_SECONDS]
        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(self.path, json.dumps({"batches": kept}, indent=1).encode("utf-8"))

    def find(self, model: str, custom_id: str) -> str | None:
        """The newest stored batch of ``model`` holding ``custom_id`` not yet delivered, if any."""
        with self._lock:
            for batch in reversed(self._read()):
                if (
                    batch.get("model") == model
                    and custom_id in batch.get("requests", ())
                    and custom_id not in batch.get("delivered", ())
                ):
                    return str(batch["id"])
        return None

    def add(self, model: str, batch_id: str, custom_ids: Sequence[str]) -> None:
        with self._lock:
            batches = self._read()
            batches.append(
                {
                    "id": batch_id,
                    "model": model,
                    "created": self._clock(),
                    "requests": list(custom_ids),
                    "delivered": [],
                }
            )
            self._write(batches)

    def deliver(self, batch_id: str, custom_ids: Sequence[str]) -> None:
        """Mark ``custom_ids`` of ``batch_id`` as handed over; a batch all handed over is dropped."""
        with self._lock:
            batches = self._read()
            for batch in batches:
                if batch["id"] == batch_id:
                    batch["delivered"] = sorted({*batch.get("delivered", ()), *custom_ids})
            self._write([b for b in batches if set(b.get("requests", ())) - set(b.get("delivered", ()))])

    def forget(self, batch_id: str) -> None:
        with self._lock:
            self._write([b for b in self._read() if b["id"] != batch_id])

    def batch_ids(self) -> list[str]:
        with self._lock:
            return [str(b["id"]) for b in self._read()]
