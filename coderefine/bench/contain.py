"""Nothing a library's tests start outlives their run, and their temporary files stay in the bench's folder.

Every test run of a build or a scoring starts in a session of its own, and its process group is ended
when the run ends (``project/runner.py``, ``signals/warm.py``). A child that starts a session of its own
(a daemon, a server started with ``start_new_session=True``) leaves that group; it still carries the
run's environment, so each run is marked there with a value of its own and, where the system lists
processes' environments (Linux's ``/proc``), whatever still carries the mark when the run ends is ended.
"""

from __future__ import annotations

import contextlib
import os
import signal
import uuid
from collections.abc import Mapping
from pathlib import Path

MARK = "CODEREFINE_BENCH_RUN"
PROC = Path("/proc")


def marked(environ: Mapping[str, str], temp: Path | None = None) -> dict[str, str]:
    """``environ`` with a new mark, and with ``temp`` (created) as the temporary folder of everything
    started with it (``TMPDIR``, which Python's ``tempfile`` and pytest's ``tmp_path`` both follow)."""
    env = {**environ, MARK: uuid.uuid4().hex}
    if temp is not None:
        temp.mkdir(parents=True, exist_ok=True)
        env.update(TMPDIR=str(temp), TEMP=str(temp), TMP=str(temp))
    return env


def end_marked(environ: Mapping[str, str], proc: Path = PROC) -> int:
    """End every process (but this one) whose environment carries ``environ``'s mark; how many."""
    value = environ.get(MARK)
    if not value or not proc.is_dir():
        return 0
    entry = f"{MARK}={value}".encode()
    ended: set[int] = set()
    # Twice: a process may have started another while the first pass ended it. A process already sent
    # SIGKILL can still be listed in the second pass (the signal is delivered asynchronously), so it is
    # counted once.
    for _ in range(2):
        found = [pid for pid in _pids(proc) if pid not in ended and entry in _environ(proc / str(pid))]
        for pid in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                ended.add(pid)
        if not found:
            break
    return len(ended)


def _pids(proc: Path) -> list[int]:
    own = os.getpid()
    try:
        return [int(p.name) for p in proc.iterdir() if p.name.isdigit() and int(p.name) != own]
    except OSError:
        return []


def _environ(folder: Path) -> list[bytes]:
    try:
        return (folder / "environ").read_bytes().split(b"\0")
    except OSError:
        return []
