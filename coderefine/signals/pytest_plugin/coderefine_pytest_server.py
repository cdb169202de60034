"""A warm pytest: imports pytest and its installed plugins once, then forks one child per test run.

coderefine starts it with the project's own interpreter and writes one JSON request per line to its stdin:
``{"args", "cwd", "env", "out", "err", "exit"}``. For each it forks a child that becomes the leader of a new
session (so coderefine can stop it and anything it starts with one signal to the group), takes the
request's working folder, environment, ``sys.path`` and standard streams, runs ``pytest.main(args)`` and
writes its exit code to ``exit`` (atomically): as soon as the session finishes when its tests ran (exit 0
or 1; coderefine then stops the child, whose summary and exit hooks nobody reads), else before leaving.
The server answers ``{"pid": ...}`` at once and reads the next request, so runs may overlap. It never
imports the project's code or conftest files: every child imports them fresh, from the tree it runs in.
Standard library and pytest only.

Argument: a comma-separated list of top-level module names not to preload (the project's own packages, so
that a project that is itself a pytest plugin is tested from its tree, not from site-packages); or ``-``:
the server imports pytest at once, then reads ``{"avoid": [...]}`` as the first line of its stdin before it
loads the installed plugins (coderefine starts it before it knows the project's files).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from typing import Any


def _preload(avoid: set[str]) -> None:
    import importlib.metadata

    for entry in importlib.metadata.entry_points(group="pytest11"):
        if entry.value.split(".")[0].split(":")[0] in avoid:
            continue
        # A plugin that fails here fails again, visibly, in the child.
        with contextlib.suppress(Exception):
            entry.load()


def _write_exit(path: str, code: int) -> None:
    with open(path + ".tmp", "w", encoding="utf-8") as handle:
        handle.write(str(code))
    os.replace(path + ".tmp", path)


def _finished_early(pytest: Any, exit_path: str) -> object:
    """A plugin that writes the exit file as soon as the session has finished with its tests run (exit
    0 or 1). What pytest does after that (the terminal summary, other plugins' reports,
    pytest_unconfigure, atexit) is no part of the result coderefine reads (one JSON line per test), yet it
    can take a second: hypothesis' plugin imports all of hypothesis for its summary, in every run, even
    when no test used it. The run happens in coderefine's own copy of the project, and fixtures were torn
    down with the last test, so coderefine stops the child once this file exists. Any other exit status
    lets pytest finish, so that its own summary of a collection or usage error is in the output."""

    class FinishedEarly:
        written = False

        @pytest.hookimpl(trylast=True)  # type: ignore[untyped-decorator]
        def pytest_sessionfinish(self, session: Any, exitstatus: Any) -> None:
            code = int(getattr(session, "exitstatus", exitstatus))
            # --max-warnings (pytest 9.2) changes the status after every sessionfinish implementation:
            # then the run ends as pytest ends it.
            if code in (0, 1) and session.config.getoption("max_warnings", None) is None:
                sys.stdout.flush()
                sys.stderr.flush()
                _write_exit(exit_path, code)
                self.written = True

    return FinishedEarly()


def _child(request: dict[str, Any], base_path: list[str], started: int) -> None:
    code = 3
    try:
        os.setsid()
        os.write(started, b"1")
        os.close(started)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        null = os.open(os.devnull, os.O_RDONLY)
        out = os.open(request["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        err = os.open(request["err"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(null, 0)
        os.dup2(out, 1)
        os.dup2(err, 2)
        for fd in (null, out, err):
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.dont_write_bytecode = bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))
        extra = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        # As `python -m pytest` would have it: the working folder, then PYTHONPATH, then the rest.
        sys.path[:] = [request["cwd"], *extra, *base_path]
        import pytest

        sys.argv = [os.path.join(os.path.dirname(pytest.__file__), "__main__.py"), *request["args"]]
        finished = _finished_early(pytest, request["exit"])
        code = int(pytest.main(list(request["args"]), plugins=[finished]))
        if getattr(finished, "written", False):
            os._exit(code)  # the exit file already holds the run's code: never a second, later one
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 3
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
            _write_exit(request["exit"], code)
        finally:
            os._exit(code)


def _avoid() -> set[str]:
    given = sys.argv[1] if len(sys.argv) > 1 else ""
    if given != "-":
        return {name for name in given.split(",") if name}
    try:
        return {str(name) for name in json.loads(sys.stdin.readline())["avoid"]}
    except (ValueError, KeyError, TypeError):
        sys.exit(0)  # coderefine gave up on this server


def main() -> None:
    # Children are reaped by the kernel: coderefine watches their process groups and exit files.
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is coderefine's to handle; it stops us
    here = os.path.dirname(os.path.abspath(__file__))
    base_path = [p for p in sys.path if p and os.path.abspath(p) != here]
    try:
        import pytest  # noqa: F401

        avoid = _avoid()
        _preload(avoid)
    except ImportError as exc:
        sys.stdout.write(json.dumps({"error": str(exc)}) + "\n")
        sys.stdout.flush()
        return
    # A preloaded module that the project also has (a project that is pytest, a plugin or one of their
    # dependencies) would shadow the tree's copy in every child: then the runs must be cold.
    clash = sorted({name.split(".")[0] for name in sys.modules} & avoid)
    if clash:
        sys.stdout.write(json.dumps({"error": f"the project provides {', '.join(clash)}"}) + "\n")
        sys.stdout.flush()
        return
    sys.stdout.write(json.dumps({"ready": True}) + "\n")
    sys.stdout.flush()
    for line in sys.stdin:
        try:
            request = json.loads(line)
        except ValueError:
            continue
        sys.stdout.flush()
        started_r, started_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(started_r)
            _child(request, base_path, started_w)
        os.close(started_w)
        # Answer only once the child leads its own process group: coderefine watches that group.
        os.read(started_r, 1)
        os.close(started_r)
        sys.stdout.write(json.dumps({"pid": pid}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
