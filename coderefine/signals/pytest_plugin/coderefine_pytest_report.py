"""A pytest plugin that coderefine loads into the project's own interpreter.

It writes one JSON line per event to the file named by PYTEST_CODEREFINE_REPORT as soon as the event
happens, so that a run that hangs or kills its own process still tells which tests finished and which
one was running. It also bounds each test phase by PYTEST_CODEREFINE_TIMEOUT seconds with SIGALRM.
This file must import nothing but pytest and the standard library: the project's interpreter may not
have coderefine installed.
"""

from __future__ import annotations

import json
import os
import re
import signal
import tempfile
import threading
from typing import Any

import pytest

_REPORT = os.environ.get("PYTEST_CODEREFINE_REPORT", "")
_TIMEOUT = float(os.environ.get("PYTEST_CODEREFINE_TIMEOUT", "0") or 0)
_MAX_TEXT = 2000
# Folders whose absolute paths a failure's text names relative to them (the run's root first).
_ROOTS: list[str] = []
_ADDRESS = re.compile(r"\b(at 0x)[0-9a-fA-F]+\b")
_TOOK = re.compile(r"\btook \d+\.\d+ ?(?:ms|s|seconds)\b")
_TEMP = os.path.realpath(tempfile.gettempdir())
_PYTEST_TEMP = re.compile(re.escape(_TEMP) + r"/pytest-of-[^/\s]+/pytest-\d+/")
_SCRATCH = re.compile(re.escape(_TEMP) + r"/[^/\s'\"]+")


class TestTimeoutError(BaseException):
    """Raised inside a test that ran past its time limit. A BaseException, so that the code under test
    cannot swallow it with ``except Exception`` and loop on (pytest still reports the test as failed)."""


def _write(event: dict[str, Any]) -> None:
    if not _REPORT:
        return
    with open(_REPORT, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(event) + "\n")
        handle.flush()


def pytest_configure(config: Any) -> None:
    for folder in (str(config.rootpath), os.getcwd()):
        for found in dict.fromkeys((folder, os.path.realpath(folder))):
            if len(found) > 1 and found not in _ROOTS:
                _ROOTS.append(found)
    _ROOTS.sort(key=len, reverse=True)


def stable_text(text: str) -> str:
    """A failure's text as it reads on every run of the same code: paths below the project relative to
    it, pytest's ``tmp_path`` folders and other temporary folders as ``<tmp>``, object addresses as
    ``at 0x...``, hypothesis' measured timings as ``took <time>``. The same replies must reproduce the
    same run (``--record`` / replay), so what a model is shown may not carry a run's accidents."""
    for root in _ROOTS:
        text = text.replace(root + os.sep, "")
    text = _PYTEST_TEMP.sub("<tmp>/", text)
    if len(_TEMP) > 1:
        text = _SCRATCH.sub("<tmp>", text)
    text = _ADDRESS.sub(r"\g<1>...", text)
    return _TOOK.sub("took <time>", text)


def _on_alarm(signum: int, frame: object) -> None:
    raise TestTimeoutError(f"test ran longer than {_TIMEOUT:g}s (coderefine per-test timeout)")


def _timed() -> bool:
    return (
        bool(_TIMEOUT)
        and hasattr(signal, "SIGALRM")
        and threading.current_thread() is threading.main_thread()
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    previous = None
    if _timed():
        previous = signal.signal(signal.SIGALRM, _on_alarm)
    try:
        yield
    finally:
        if _timed():
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous or signal.SIG_DFL)


def _phase(item: pytest.Item) -> Any:
    if _timed():
        signal.setitimer(signal.ITIMER_REAL, _TIMEOUT)
    try:
        yield
    finally:
        if _timed():
            signal.setitimer(signal.ITIMER_REAL, 0)


pytest_runtest_setup = pytest.hookimpl(hookwrapper=True)(_phase)
pytest_runtest_call = pytest.hookimpl(hookwrapper=True)(_phase)
pytest_runtest_teardown = pytest.hookimpl(hookwrapper=True)(_phase)


def pytest_runtest_logstart(nodeid: str, location: tuple[str, int | None, str]) -> None:
    _write({"event": "start", "nodeid": nodeid, "file": location[0], "line": location[1]})


def _crash(report: Any) -> dict[str, Any]:
    crash = getattr(report.longrepr, "reprcrash", None)
    frames = []
    for entry in getattr(getattr(report.longrepr, "reprtraceback", None), "reprentries", []) or []:
        loc = getattr(entry, "reprfileloc", None)
        if loc is not None:
            frames.append({"path": str(loc.path), "line": loc.lineno})
    return {
        "message": stable_text(crash.message) if crash is not None else "",
        "crash_path": str(crash.path) if crash is not None else "",
        "crash_line": crash.lineno if crash is not None else 0,
        "frames": frames[-8:],
    }


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when != "call" and not report.failed:
        return
    event: dict[str, Any] = {
        "event": "result",
        "nodeid": report.nodeid,
        "when": report.when,
        "outcome": report.outcome,
        "file": report.location[0],
        "line": report.location[1],
        "duration": report.duration,
    }
    if report.failed:
        event.update(_crash(report))
        event["text"] = stable_text(report.longreprtext)[-_MAX_TEXT:]
    _write(event)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:
        text = stable_text(str(report.longrepr))
        _write({"event": "collect_error", "nodeid": report.nodeid, "text": text[-_MAX_TEXT:]})
