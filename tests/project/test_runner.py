"""The real runner ends what the program it ran left running."""

from __future__ import annotations

import os
import time
from pathlib import Path

from coderefine.project.runner import SubprocessRunner


def test_a_child_left_running_ends_with_the_run(tmp_path: Path) -> None:
    done = SubprocessRunner().run(
        ["sh", "-c", "sleep 60 >/dev/null 2>&1 & echo $!"], cwd=tmp_path, timeout=10
    )
    pid = int(done.out.strip())
    deadline = time.monotonic() + 5
    while _running(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _running(pid)


def _running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat.rpartition(")")[2].split()[0] not in ("Z", "X")
