"""parse_module from several threads: the CPython 3.11 AST constructor race does not reach us."""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable

import pytest

from coderefine.pyast import parse_module

SOURCE = "def f(x):\n    return [x, [x, [x, {x: (x, x)}]]]\n" * 40


class _SwitchesThreadsWhenCollected:
    """Garbage whose collection (inside another parse's allocations) hands the GIL to another thread."""

    def __init__(self) -> None:
        self.cycle = self

    def __del__(self) -> None:
        time.sleep(0.001)


def _nested(depth: int, call: Callable[[], object]) -> object:
    # Each thread starts its parse at a different Python stack depth: that is what 3.11 compares.
    return call() if depth == 0 else _nested(depth - 1, call)


def test_parses_interleaved_across_threads_at_different_depths_all_succeed() -> None:
    errors: list[BaseException] = []
    done = threading.Event()

    def other() -> None:
        while not done.is_set():
            try:
                _nested(25, lambda: parse_module("x = [1, [2, [3]]]\n" * 20))
            except SystemError as error:
                errors.append(error)

    threshold = gc.get_threshold()
    gc.set_threshold(100)
    thread = threading.Thread(target=other)
    thread.start()
    try:
        for _ in range(20):
            for _ in range(30):
                _SwitchesThreadsWhenCollected()
            try:
                parse_module(SOURCE)
            except SystemError as error:
                errors.append(error)
    finally:
        done.set()
        thread.join()
        gc.set_threshold(*threshold)
    assert errors == []


def test_a_syntax_error_is_raised_as_ast_parse_raises_it() -> None:
    with pytest.raises(SyntaxError):
        parse_module("def broken(:\n")
