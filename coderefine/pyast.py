"""Python source to an ``ast.Module``, safe to call from several threads at once.

CPython 3.11 keeps the AST constructor's recursion depth in state shared by every thread
(python/cpython#106905): two ``ast.parse`` calls that interleave (a garbage collection in one lets the
other run) can fail with ``SystemError: AST constructor recursion depth mismatch``. The benchmark runs
tasks in threads, each building views, specs and outlines, so every parse of ours takes one lock. The
parse itself is milliseconds beside a model call of seconds, so the lock costs nothing a user sees.
"""

from __future__ import annotations

import ast
import threading

_PARSING = threading.Lock()


def parse_module(source: str) -> ast.Module:
    """``ast.parse(source)`` under the process's one parse lock; raises ``SyntaxError`` as it does."""
    with _PARSING:
        return ast.parse(source)
