"""A pytest plugin that records which lines of the library under test each test runs, for ``bench
make-suite``.

Mutants are only proposed on lines that some test runs (a change elsewhere cannot make a test fail), and
each candidate is then checked with only the tests that run its lines. Lines run outside any test (at
import, in collection) are recorded apart: a change there may reach every test. The result is written as
JSON to CODEREFINE_BENCH_LINES when pytest ends:
``{"tests": [nodeid, ...], "lines": {file: {line: [test index, ...]}}, "outside": {file: [line, ...]}}``.
Standard library only: it is loaded into the library's own interpreter.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from types import FrameType
from typing import Any

_OUT = os.environ.get("CODEREFINE_BENCH_LINES", "")
_ROOT = os.path.realpath(os.environ.get("CODEREFINE_BENCH_ROOT", os.getcwd())) + os.sep
_OUTSIDE = -1
_tests: list[str] = []
_current = _OUTSIDE
# file -> line -> the indices of the tests that ran it (_OUTSIDE: outside any test)
_seen: dict[str, dict[int, set[int]]] = {}
_skip: set[str] = set()


def _mark(lines: dict[int, set[int]], line: int) -> None:
    found = lines.get(line)
    if found is None:
        lines[line] = {_current}
    else:
        found.add(_current)


def _local(frame: FrameType, event: str, arg: Any) -> Any:
    if event == "line":
        _mark(_seen[frame.f_code.co_filename], frame.f_lineno)
    return _local


def _global(frame: FrameType, event: str, arg: Any) -> Any:
    name = frame.f_code.co_filename
    if name in _skip:
        return None
    if name not in _seen:
        path = os.path.realpath(name)
        if not path.startswith(_ROOT) or os.sep + "test" in path[len(_ROOT) - 1 :]:
            _skip.add(name)
            return None
        _seen[name] = {}
    _mark(_seen[name], frame.f_lineno)
    return _local


def pytest_configure(config: Any) -> None:
    if _OUT:
        sys.settrace(_global)
        threading.settrace(_global)


def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    # Called before the test's setup: fixtures made for it are its lines too.
    global _current
    _current = len(_tests)
    _tests.append(nodeid)


def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
    global _current
    _current = _OUTSIDE


def pytest_unconfigure(config: Any) -> None:
    if not _OUT:
        return
    sys.settrace(None)
    lines: dict[str, dict[str, list[int]]] = {}
    outside: dict[str, list[int]] = {}
    for name, seen in _seen.items():
        rel = os.path.realpath(name)[len(_ROOT) :]
        lines[rel] = {str(line): sorted(t for t in tests if t != _OUTSIDE) for line, tests in seen.items()}
        outside[rel] = sorted(line for line, tests in seen.items() if _OUTSIDE in tests)
    with open(_OUT, "w", encoding="utf-8") as handle:
        json.dump({"tests": _tests, "lines": lines, "outside": outside}, handle)
