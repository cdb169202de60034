"""A warm test runner: one server process of the project's interpreter that has imported pytest and its
plugins, forking a child per run (``pytest_plugin/coderefine_pytest_server.py``).

A cold run pays the interpreter start, the import of pytest and every installed plugin, then collection;
on a small project the imports are most of it. The server pays them once per coderefine run, while
coderefine does its own work, and each later run starts from a fork. Children import the project's code
and conftest files fresh; the server never imports them. Each child leads its own process group, which is
what a timeout or Ctrl-C stops. If the server cannot start or dies, runs fall back to a cold subprocess.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO

from coderefine.errors import ToolTimeoutError
from coderefine.project.runner import Completed

SERVER = Path(__file__).parent / "pytest_plugin" / "coderefine_pytest_server.py"
POLL = 0.005  # seconds between looks at a running child's exit file

_QUIET_REWRITE = (
    "-W",
    "ignore:Module already imported so cannot be rewritten:pytest.PytestAssertRewriteWarning",
)


def top_level_names(files: Sequence[str]) -> set[str]:
    """The project's own top-level modules and packages (``src/`` layouts included): what the server must
    never preload."""
    # String work, not PurePosixPath: this runs for every file of the project in every file's run of a
    # sweep, where building the path objects took 0.15 s a file at 20,000 files.
    names = set()
    for rel in files:
        head, sep, rest = rel.strip("/").partition("/")
        if sep and head in ("src", "lib"):
            head = rest.partition("/")[0]
        if head:
            names.add(head.removesuffix(".py"))
    return names


class WarmPytest:
    """The client side of the server. ``run`` has the ``Runner.run`` contract for pytest's arguments."""

    def __init__(self, python: str, environ: Mapping[str, str], avoid: Iterable[str] | None = ()) -> None:
        """``avoid``: the project's top-level names, never preloaded; None starts the server before they
        are known (it imports pytest meanwhile), and ``provide`` gives them later."""
        env = {k: v for k, v in environ.items() if k != "PYTHONPATH"}
        self.python = python
        self.avoid = None if avoid is None else frozenset(avoid)
        self._lock = threading.Lock()
        self._live: set[int] = set()
        self._ready: bool | None = None
        self._scratch = tempfile.TemporaryDirectory(prefix="coderefine-warm-")
        self._count = 0
        try:
            self._proc: subprocess.Popen[str] | None = subprocess.Popen(
                [python, str(SERVER), "-" if self.avoid is None else ",".join(sorted(self.avoid))],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=env,
                text=True,
                start_new_session=True,
            )
        except OSError:
            self._proc = None

    def _stdio(self) -> tuple[IO[str], IO[str]] | None:
        proc = self._proc
        if proc is None or proc.stdin is None or proc.stdout is None:
            return None
        return proc.stdin, proc.stdout

    def provide(self, avoid: Iterable[str]) -> None:
        """The names a server started without them must not preload; once."""
        with self._lock:
            if self.avoid is not None:
                raise ValueError("this server already has its names to avoid")
            self.avoid = frozenset(avoid)
            stdio = self._stdio()
            try:
                if stdio is not None:
                    stdio[0].write(json.dumps({"avoid": sorted(self.avoid)}) + "\n")
                    stdio[0].flush()
            except OSError:
                self._stop_server()

    def available(self) -> bool:
        """Whether the server is up (waits for it to finish importing on the first call)."""
        with self._lock:
            if self._ready is None and self.avoid is None:
                self._ready = False  # it would wait for its names forever
                self._stop_server()
            if self._ready is None:
                stdio = self._stdio()
                line = stdio[1].readline() if stdio else ""
                try:
                    self._ready = bool(json.loads(line).get("ready"))
                except (ValueError, AttributeError):
                    self._ready = False
                if not self._ready:
                    self._stop_server()
            return self._ready

    def run(
        self, args: Sequence[str], *, cwd: Path, timeout: float | None, env: Mapping[str, str]
    ) -> Completed | None:
        """pytest with ``args`` in a fresh child; None when the server is gone (run it cold instead).
        A run whose tests ran (exit 0 or 1) is stopped when its session finishes, so its output ends
        wherever pytest's summary had got to: the results are the report plugin's JSON lines, complete
        by then; the output explains only the runs that end otherwise, which pytest finishes itself."""
        if not self.available():
            return None
        with self._lock:
            self._count += 1
            base = Path(self._scratch.name) / f"run{self._count}"
        out, err, exit_file = (Path(f"{base}.{kind}") for kind in ("out", "err", "exit"))
        request = {
            # The server imported the installed plugins before pytest could mark them for assertion
            # rewriting; pytest then warns at start-up, and a project whose filterwarnings has "error"
            # would fail before any test. Cold runs rewrite those plugins; warm ones cannot, so say so once.
            "args": [*_QUIET_REWRITE, *args],
            "cwd": str(cwd),
            "env": dict(env),
            "out": str(out),
            "err": str(err),
            "exit": str(exit_file),
        }
        pid = self._start(request)
        if pid is None:
            return None
        try:
            code = self._wait(pid, exit_file, timeout)
        finally:
            with self._lock:
                self._live.discard(pid)
        return Completed(argv=("pytest", *args), code=code, out=_read(out), err=_read(err))

    def _start(self, request: Mapping[str, object]) -> int | None:
        with self._lock:
            stdio = self._stdio()
            if stdio is None:
                return None
            try:
                stdio[0].write(json.dumps(request) + "\n")
                stdio[0].flush()
                pid = int(json.loads(stdio[1].readline())["pid"])
            except (OSError, ValueError, KeyError, TypeError):
                self._stop_server()
                return None
            self._live.add(pid)
            return pid

    def _wait(self, pid: int, exit_file: Path, timeout: float | None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if exit_file.exists():
                text = _read(exit_file).strip()
                # The child may still be in pytest's summary and exit hooks, which nothing here reads: on
                # two cores they would slow whatever runs next.
                _kill_group(pid)
                return int(text) if text.lstrip("-").isdigit() else 3
            if not _group_alive(pid):
                # Gone without an exit file: killed by a signal or by its own os._exit.
                return int(_read(exit_file).strip() or -1) if exit_file.exists() else -1
            if deadline is not None and time.monotonic() >= deadline:
                _kill_group(pid)
                raise ToolTimeoutError(f"'pytest' ran longer than {timeout:g}s and was stopped")
            time.sleep(POLL)

    def kill_all(self) -> None:
        """Stop every running child's process group (Ctrl-C, or an evaluation that failed)."""
        with self._lock:
            live = list(self._live)
        for pid in live:
            _kill_group(pid)

    def _stop_server(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        proc.wait()

    def close(self) -> None:
        self.kill_all()
        with self._lock:
            self._stop_server()
        self._scratch.cleanup()


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _group_alive(pid: int) -> bool:
    try:
        os.killpg(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
