"""The functions each test calls, for fault localization: part of the report plugin
(``coderefine_pytest_report.py``), loaded from the same folder into the project's own interpreter.

Only in the one run that asks for it (PYTEST_CODEREFINE_CALLS). On Python 3.12+ sys.monitoring sees
each function start once per test (the callback turns itself off for that code until the next test);
before, a trace function that sees calls and traces no line. A profile hook (sys.setprofile) also sees
every C call and return: on tabulate's tests it took 38 s where the plain run takes 2. This file must
import nothing but the standard library: the project's interpreter may not have coderefine installed.
"""

from __future__ import annotations

import os
import sys
from typing import Any

_CALLED: set[tuple[str, int]] = set()
# code object -> (its file relative to the run's folder, its first line), or None: not the project's
_CODES: dict[Any, Any] = {}
_HERE = ""
_MONITOR = getattr(sys, "monitoring", None)
_TOOL = 4  # a sys.monitoring tool id of no standard tool (0-5 are free for any use)


def _code_key(code: Any) -> Any:
    path = os.path.realpath(code.co_filename)
    if not path.startswith(_HERE):
        return None
    relative = path[len(_HERE) :].replace(os.sep, "/")
    if "site-packages/" in relative or relative.startswith("."):
        return None  # a virtual environment inside the project is no code of its own
    return (relative, code.co_firstlineno)


def _called(code: Any) -> None:
    try:
        key = _CODES[code]
    except KeyError:
        key = _CODES[code] = _code_key(code)
    if key is not None:
        _CALLED.add(key)


def _trace(frame: Any, event: str, arg: Any) -> None:
    if event == "call":
        _called(frame.f_code)
    return None  # no line events in this frame


def _started(code: Any, offset: int) -> Any:
    _called(code)
    return _MONITOR.DISABLE  # type: ignore[union-attr]


def start() -> None:
    global _HERE, _MONITOR
    if not os.environ.get("PYTEST_CODEREFINE_CALLS"):
        return
    _HERE = os.path.realpath(os.getcwd()) + os.sep
    if _MONITOR is not None:
        try:
            _MONITOR.use_tool_id(_TOOL, "coderefine")
        except ValueError:  # taken: the trace function instead
            _MONITOR = None
        else:
            _MONITOR.register_callback(_TOOL, _MONITOR.events.PY_START, _started)


def recording(on: bool) -> None:
    """Calls are recorded only while a test's setup, call or teardown runs: pytest's own work around
    them (collection, the report of a failure with its traceback) is not the test's, and tracing it
    cost more than the tests themselves when a hundred tests failed."""
    if not _HERE:
        return
    if _MONITOR is not None:
        _MONITOR.set_events(_TOOL, _MONITOR.events.PY_START if on else 0)
    else:
        sys.settrace(_trace if on else None)


def next_test() -> None:
    """What collection and the tests before called is not this test's; each function's start is seen
    again."""
    _CALLED.clear()
    if _HERE and _MONITOR is not None:
        _MONITOR.restart_events()


def active() -> bool:
    """Whether this run records calls."""
    return bool(_HERE)


def taken() -> list[list[Any]]:
    """The functions called since the last test's end (file from the run's folder, first line), sorted;
    the record starts again empty."""
    called = sorted(_CALLED)
    _CALLED.clear()
    return [list(key) for key in called]
