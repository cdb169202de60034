"""A pytest plugin that records which lines of the library under test run, for ``bench make-suite``.

Mutants are only proposed on lines that some test runs: a change elsewhere cannot make a test fail.
The lines are written as JSON to CODEREFINE_BENCH_LINES when pytest ends. Standard library only: it is
loaded into the library's own interpreter.
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
_seen: dict[str, set[int]] = {}
_skip: set[str] = set()


def _local(frame: FrameType, event: str, arg: Any) -> Any:
    if event == "line":
        _seen[frame.f_code.co_filename].add(frame.f_lineno)
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
        _seen[name] = set()
    _seen[name].add(frame.f_lineno)
    return _local


def pytest_configure(config: Any) -> None:
    if _OUT:
        sys.settrace(_global)
        threading.settrace(_global)


def pytest_unconfigure(config: Any) -> None:
    if not _OUT:
        return
    sys.settrace(None)
    data = {os.path.realpath(k)[len(_ROOT) :]: sorted(v) for k, v in _seen.items()}
    with open(_OUT, "w", encoding="utf-8") as handle:
        json.dump(data, handle)
