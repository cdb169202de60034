"""The functions each test calls, for fault localization: part of the report plugin
(``coderefine_pytest_report.py``), loaded from the same folder into the project's own interpreter.

Only in the one run that asks for it (PYTEST_CODEREFINE_CALLS). On Python 3.12+ sys.monitoring sees
each function start once per test (the callback turns itself off for that code until the next test);
before, a trace function that sees calls and traces no line. A profile hook (sys.setprofile) also sees
every C call and return: on tabulate's tests it took 38 s where the plain run takes 2. This file must
import nothing but the standard library: the project's interpreter may not have coderefine installed.

The files named by PYTEST_CODEREFINE_LINES (the files under review, ``os.pathsep`` between them) also
have the lines each test ran recorded: a definition every test calls (an AST handler, a formatter's
main loop) can still hold a branch only the failing tests take, and that branch is where a fix goes.
Only those files: tracing every line of the project would cost what a coverage run costs.
"""

from __future__ import annotations

import os
import sys
from typing import Any

_CALLED: set[tuple[str, int]] = set()
_LINES: set[tuple[str, int]] = set()
# code object -> (its file relative to the run's folder, its first line), or None: not the project's
_CODES: dict[Any, Any] = {}
_HERE = ""
_LINE_FILES: frozenset[str] = frozenset()
_ON = False
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


def _called(code: Any) -> Any:
    """Record a call of ``code``; its file when its lines are to be recorded too, else None."""
    try:
        key = _CODES[code]
    except KeyError:
        key = _CODES[code] = _code_key(code)
    if key is None:
        return None
    _CALLED.add(key)
    return key[0] if key[0] in _LINE_FILES else None


def _trace(frame: Any, event: str, arg: Any) -> Any:
    if event == "call" and _called(frame.f_code) is not None:
        return _traced_line
    return None  # no line events in this frame


def _traced_line(frame: Any, event: str, arg: Any) -> Any:
    if event == "line":
        _LINES.add((_CODES[frame.f_code][0], frame.f_lineno))
    return _traced_line


def _started(code: Any, offset: int) -> Any:
    if _called(code) is not None:
        _MONITOR.set_local_events(_TOOL, code, _MONITOR.events.LINE)  # type: ignore[union-attr]
    return _MONITOR.DISABLE  # type: ignore[union-attr]


def _line(code: Any, line: int) -> Any:
    # Local events stay set between tests: pytest's own work around a test is not the test's.
    if _ON:
        _LINES.add((_CODES[code][0], line))
    return _MONITOR.DISABLE  # type: ignore[union-attr]


def start() -> None:
    global _HERE, _MONITOR, _LINE_FILES
    if not os.environ.get("PYTEST_CODEREFINE_CALLS"):
        return
    _HERE = os.path.realpath(os.getcwd()) + os.sep
    named = os.environ.get("PYTEST_CODEREFINE_LINES", "").split(os.pathsep)
    _LINE_FILES = frozenset(path for path in named if path)
    if _MONITOR is not None:
        try:
            _MONITOR.use_tool_id(_TOOL, "coderefine")
        except ValueError:  # taken: the trace function instead
            _MONITOR = None
        else:
            _MONITOR.register_callback(_TOOL, _MONITOR.events.PY_START, _started)
            _MONITOR.register_callback(_TOOL, _MONITOR.events.LINE, _line)


def recording(on: bool) -> None:
    """Calls are recorded only while a test's setup, call or teardown runs: pytest's own work around
    them (collection, the report of a failure with its traceback) is not the test's, and tracing it
    cost more than the tests themselves when a hundred tests failed."""
    global _ON
    if not _HERE:
        return
    _ON = on
    if _MONITOR is not None:
        _MONITOR.set_events(_TOOL, _MONITOR.events.PY_START if on else 0)
    else:
        sys.settrace(_trace if on else None)


def next_test() -> None:
    """What collection and the tests before called is not this test's; each function's start is seen
    again."""
    _CALLED.clear()
    _LINES.clear()
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


def taken_lines() -> list[list[Any]]:
    """The lines of the files named for it run since the last test's end, sorted; the record starts
    again empty."""
    ran = sorted(_LINES)
    _LINES.clear()
    return [list(key) for key in ran]
