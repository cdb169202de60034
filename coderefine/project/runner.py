"""The one way coderefine runs external programs (git, ruff, pytest).

Everything that starts a process takes a ``Runner``, so tests can pass a fake and every failure is
turned into the same readable errors. Each process gets its own session so that a timeout or a
Ctrl-C stops the whole process tree (pytest may start children of its own).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from coderefine.errors import ToolMissingError, ToolTimeoutError


@dataclass(frozen=True)
class Completed:
    """What a finished program left: its exit code and its output, decoded as UTF-8."""

    argv: tuple[str, ...]
    code: int
    out: str
    err: str


class Runner(Protocol):
    """Runs a program to completion or to its time limit."""

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
        stdin: str | None = None,
    ) -> Completed: ...


class SubprocessRunner:
    """The real runner: ``subprocess.Popen`` in a new session, its group killed when it ends or times out.

    It remembers the processes it is waiting for, so that an interrupt in another thread (Ctrl-C lands
    in the main thread, tests run in workers) can stop them all with ``kill_all``.
    """

    def __init__(self) -> None:
        self._live: set[subprocess.Popen[bytes]] = set()
        self._lock = threading.Lock()

    def kill_all(self) -> None:
        with self._lock:
            live = list(self._live)
        for proc in live:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
        stdin: str | None = None,
    ) -> Completed:
        args = tuple(argv)
        try:
            proc = subprocess.Popen(
                args,
                cwd=cwd,
                env=dict(env) if env is not None else None,
                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except FileNotFoundError as exc:
            raise ToolMissingError(
                f"cannot run '{args[0]}': program not found; install it or fix the setting that names it"
            ) from exc
        except PermissionError as exc:
            raise ToolMissingError(f"cannot run '{args[0]}': permission denied") from exc
        with self._lock:
            self._live.add(proc)
        try:
            out, err = proc.communicate(
                input=stdin.encode("utf-8") if stdin is not None else None, timeout=timeout
            )
        except subprocess.TimeoutExpired as exc:
            _kill_group(proc)
            raise ToolTimeoutError(
                f"'{' '.join(args[:3])}' ran longer than {timeout:g}s and was stopped"
            ) from exc
        except BaseException:
            # Ctrl-C or SIGTERM while waiting: never leave the child running behind us.
            _kill_group(proc)
            raise
        finally:
            with self._lock:
                self._live.discard(proc)
        # What the program started and left running (a test's server, a daemon that kept its group) ends
        # with it: nothing coderefine runs is meant to outlive the call.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        return Completed(
            argv=args,
            code=proc.returncode,
            out=out.decode("utf-8", errors="replace"),
            err=err.decode("utf-8", errors="replace"),
        )


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()
