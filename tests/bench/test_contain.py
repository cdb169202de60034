"""A run's mark ends what its tests started in a session of their own; its temporary folder is its own."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from coderefine.bench.contain import MARK, PROC, end_marked, marked


def test_marked_gives_a_new_mark_and_a_temporary_folder(tmp_path: Path) -> None:
    first, second = marked({"PATH": "x"}, tmp_path / "tmp"), marked({"PATH": "x"})
    assert first[MARK] != second[MARK]
    assert first["TMPDIR"] == str(tmp_path / "tmp") and (tmp_path / "tmp").is_dir()
    assert "TMPDIR" not in second


@pytest.mark.skipif(not PROC.is_dir(), reason="needs /proc")
def test_a_process_in_a_session_of_its_own_is_ended_by_its_mark() -> None:
    env = marked({"PATH": ""})
    other = marked({"PATH": ""})
    argv = [sys.executable, "-c", "import time; time.sleep(60)"]
    child = subprocess.Popen(argv, env=env, start_new_session=True)
    bystander = subprocess.Popen(argv, env=other, start_new_session=True)
    try:
        time.sleep(0.2)
        assert end_marked(env) == 1
        assert child.wait(timeout=5) != 0
        assert bystander.poll() is None
    finally:
        for proc in (child, bystander):
            proc.kill()
            proc.wait()


def test_no_mark_ends_nothing(tmp_path: Path) -> None:
    assert end_marked({}) == 0
    assert end_marked({MARK: "x"}, proc=tmp_path / "none") == 0
