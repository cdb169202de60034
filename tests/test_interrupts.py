"""Interrupts and crashes in every phase leave the tree as it was (or fully written), and the journal
consistent; two runs on one project are serialised by a lock that a killed run never leaves stale."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from coderefine.cli.main import main
from coderefine.errors import LockedError
from coderefine.project.lock import run_lock
from coderefine.project.writes import FileWrite, Journal
from tests.fake_api import SLOW, FakeAnthropic, loopback_server
from tests.hostile import make_project, snapshot
from tests.refiner.test_loop import BUGGY

SLOW_TEST = (
    "import os, time\nfrom pkg.mod import add\n\n\ndef test_slow():\n"
    "    open(os.environ['PID_FILE'], 'w').write(str(os.getpid()))\n    time.sleep(60)\n"
)


def interruptible() -> None:
    """In the child before it starts: Ctrl-C's default, even when this test run was started in the
    background by a shell (which ignores SIGINT there, and an ignored signal stays ignored across exec)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_fix(root: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "coderefine", "fix", "pkg/mod.py"],
        cwd=root,
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=interruptible,
    )


def wait_for(proc: subprocess.Popen[str], text: str, timeout: float = 60) -> None:
    assert proc.stderr is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if text in line:
            return
        if not line and proc.poll() is not None:
            break
    raise AssertionError(f"never saw {text!r}")


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in state


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_during_the_model_call(tmp_path: Path, signum: int) -> None:
    root = make_project(tmp_path)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    before = snapshot(root)
    fake = FakeAnthropic([SLOW] * 3)
    with loopback_server(fake) as url:
        proc = start_fix(
            root, {"ANTHROPIC_BASE_URL": url, "CODEREFINE_TESTS": "false", "TMPDIR": str(scratch)}
        )
        wait_for(proc, "critic reviewing")
        time.sleep(0.5)
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "interrupted" in err
    assert snapshot(root) == before
    assert list(scratch.iterdir()) == []  # isolated trees removed


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_during_the_signals_kills_the_tests_too(tmp_path: Path, signum: int) -> None:
    root = make_project(tmp_path, extra={"tests/test_slow.py": SLOW_TEST})
    (root / "pkg" / "mod.py").write_text(BUGGY + "\n")
    pid_file = tmp_path / "pid"
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    before = snapshot(root)
    proc = start_fix(
        root,
        {
            "ANTHROPIC_API_KEY": "k",
            "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
            "PID_FILE": str(pid_file),
            "TMPDIR": str(scratch),
        },
    )
    wait_for(proc, "collecting signals")
    deadline = time.monotonic() + 30
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert pid_file.exists(), "the slow test never started"
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert not alive(int(pid_file.read_text()))
    assert snapshot(root) == before
    assert list(scratch.iterdir()) == []


def test_interrupt_in_the_gate_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from coderefine.refiner import session
    from tests.hostile import run_fix
    from tests.refiner.test_loop import FIX, PASS, revise

    root = make_project(tmp_path)

    def interrupted(*args: object, **kwargs: object) -> object:
        raise KeyboardInterrupt

    monkeypatch.setattr(session, "run_gate", interrupted)
    outcome = run_fix(root, [("critic", revise()), ("reviser", FIX), ("critic", PASS)], driver="replay")
    assert outcome.exit_code == 130
    assert outcome.changed == []


def test_interrupt_while_writing_rolls_back_every_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.py").write_bytes(b"a = 1\n")
    (tmp_path / "b.py").write_bytes(b"b = 1\n")
    journal = Journal(tmp_path / "journal", tmp_path)
    real = os.replace

    def interrupted(src: str, dst: str) -> None:
        if str(dst).endswith("b.py"):
            raise KeyboardInterrupt
        real(src, dst)

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        journal.write([FileWrite("a.py", b"a = 1\n", b"a = 2\n"), FileWrite("b.py", b"b = 1\n", b"b = 2\n")])
    monkeypatch.setattr(os, "replace", real)
    assert (tmp_path / "a.py").read_bytes() == b"a = 1\n"
    assert (tmp_path / "b.py").read_bytes() == b"b = 1\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.py", "b.py", "journal"]
    import json

    [entry] = journal.entries()
    assert json.loads((entry / "manifest.json").read_text())["state"] == "rolled-back"


def test_interrupt_while_writing_the_journal_touches_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from coderefine.project import writes

    (tmp_path / "a.py").write_bytes(b"a = 1\n")
    journal = Journal(tmp_path / "journal", tmp_path)
    real = writes.atomic_write

    def interrupted(path: Path, data: bytes) -> None:
        if path.name == "manifest.json":
            raise KeyboardInterrupt
        real(path, data)

    monkeypatch.setattr(writes, "atomic_write", interrupted)
    with pytest.raises(KeyboardInterrupt):
        journal.write([FileWrite("a.py", b"a = 1\n", b"a = 2\n")])
    assert (tmp_path / "a.py").read_bytes() == b"a = 1\n"
    assert journal.entries() == []  # an entry without its manifest is not an entry


def test_a_crash_half_way_is_recovered_by_the_next_run(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    journal = Journal.for_project(root, root / ".git")
    original = (root / "pkg" / "mod.py").read_bytes()
    other = root / "pkg" / "__init__.py"
    journal._record(
        [FileWrite("pkg/mod.py", original, b"X = 1\n"), FileWrite("pkg/__init__.py", b"", b"Y = 1\n")]
    )
    (root / "pkg" / "mod.py").write_bytes(b"X = 1\n")  # killed after the first file
    (tmp_path / "none.jsonl").write_text("")
    cwd = Path.cwd()
    os.chdir(root)
    err = io.StringIO()
    try:
        from contextlib import redirect_stderr

        with redirect_stderr(err):
            main(["fix", "pkg/mod.py", "--model", f"replay:{tmp_path / 'none.jsonl'}"], out=io.StringIO())
    finally:
        os.chdir(cwd)
    assert "restored pkg/mod.py" in err.getvalue()
    assert (root / "pkg" / "mod.py").read_bytes() == original
    assert other.read_bytes() == b""


def test_runs_are_serialised_and_a_killed_holder_leaves_no_stale_lock(tmp_path: Path) -> None:
    lock = tmp_path / "lock"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import sys, time\nsys.path.insert(0, sys.argv[2])\nfrom coderefine.project.lock import run_lock\n"
                "from pathlib import Path\nwith run_lock(Path(sys.argv[1])):\n    print('held', flush=True)\n"
                "    time.sleep(60)\n"
            ),
            str(lock),
            str(Path(__file__).resolve().parents[1]),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    waits: list[str] = []
    with (
        pytest.raises(LockedError, match=f"pid {holder.pid}"),
        run_lock(lock, timeout=0.5, on_wait=waits.append),
    ):
        pass
    assert waits and str(holder.pid) in waits[0]
    holder.kill()
    holder.wait()
    holder.stdout.close()
    with run_lock(lock, timeout=5):
        assert lock.read_text() == str(os.getpid())
