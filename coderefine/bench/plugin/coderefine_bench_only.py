"""A pytest plugin that keeps only the tests listed (one node id a line) in the file named by
CODEREFINE_BENCH_ONLY: ``bench make-suite`` checks a candidate with the tests that run its lines.

Node ids go through a file, not the command line: a parametrized id may hold characters that pytest's
argument parsing would read differently. Standard library only: it is loaded into the library's own
interpreter.
"""

from __future__ import annotations

import os
from typing import Any

_ONLY = os.environ.get("CODEREFINE_BENCH_ONLY", "")


def pytest_collection_modifyitems(session: Any, config: Any, items: list[Any]) -> None:
    if not _ONLY:
        return
    with open(_ONLY, encoding="utf-8") as handle:
        wanted = set(handle.read().splitlines())
    kept = [item for item in items if item.nodeid in wanted]
    dropped = [item for item in items if item.nodeid not in wanted]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
