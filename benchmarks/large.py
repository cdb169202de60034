"""Tokens per call for a one-line fix in a real large module: more-itertools 10.5.0's ``more.py``.

The sdist is pinned and cached under ``~/.cache/coderefine/bench`` (or ``$CODEREFINE_BENCH_CACHE``):
fetch it once with ``pip download --no-binary :all: --no-deps more-itertools==10.5.0 -d <that folder>``.
Counts are ``len(text) / 4`` estimates, like the other token benchmarks.
"""

from __future__ import annotations

import difflib
import os
import tarfile
from pathlib import Path

SDIST = "more-itertools-10.5.0.tar.gz"
MEMBER = "more-itertools-10.5.0/more_itertools/more.py"
PATH = "more_itertools/more.py"
# The one-line bug: padded() emits one fill value too few.
GOOD_LINE = "return chain(islice(iterable_with_repeat, n), iterable)"
BAD_LINE = "return chain(islice(iterable_with_repeat, n - 1), iterable)"


def cache_dir() -> Path:
    configured = os.environ.get("CODEREFINE_BENCH_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "coderefine" / "bench"


def more_py() -> str | None:
    archive = cache_dir() / SDIST
    if not archive.is_file():
        return None
    with tarfile.open(archive) as tar:
        member = tar.extractfile(MEMBER)
        return member.read().decode("utf-8") if member else None


def context_tokens() -> tuple[int, float, float] | None:
    """(lines of more.py, tokens per call with the whole file, tokens per call with focused context):
    the larger of the critic's and the reviser's requests, each measured the way the loop builds them."""
    from coderefine.refiner.context import views_for
    from coderefine.refiner.critique import Critique, Issue
    from coderefine.refiner.prompting import PromptBuilder
    from coderefine.signals.base import Comparison, Signal, SourceStatus

    before = more_py()
    if before is None:
        return None
    after = before.replace(GOOD_LINE, BAD_LINE, 1)
    line = after.splitlines().index("        " + BAD_LINE) + 1
    diff = "".join(
        difflib.unified_diff(before.splitlines(True), after.splitlines(True), f"a/{PATH}", f"b/{PATH}")
    )
    failing = Signal(
        "pytest",
        "tests/test_more.py",
        1,
        1,
        "tests/test_more.py::PaddedTest::test_fillvalue",
        "test failed: AssertionError: Lists differ",
        "error",
        detail="tests/test_more.py:1: in test_fillvalue\n"
        "    self.assertEqual(list(mi.padded(seq, 'x', 5)), ...)\n"
        "E   AssertionError: Lists differ",
    )
    comparison = Comparison((failing,), (), (), (SourceStatus("pytest", "ok"),))
    critique = Critique(
        "revise", "padded", (Issue("padded emits one too few", "error", PATH, line, line, BAD_LINE, "n"),)
    )
    prompts = PromptBuilder(8192)
    sizes = []
    for threshold in (0, 400):
        views = views_for({PATH: after}, {PATH: before}, comparison.introduced, threshold)
        critic = prompts.critic(
            {PATH: after},
            intent="fix defects",
            diff=diff,
            changed=["padded"],
            comparison=comparison,
            views=views,
        )
        reviser = prompts.reviser(
            {PATH: after}, intent="fix defects", critique=critique, comparison=comparison, views=views
        )
        sizes.append(max(len(r.prompt_text()) for r in (critic, reviser)) / 4)
    return after.count("\n"), sizes[0], sizes[1]
