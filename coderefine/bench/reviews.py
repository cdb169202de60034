"""Review tasks: a pull request that rewrites a function without changing its behaviour, with a mutant
inside the rewrite (the bug is one changed line among many) or without one (the negatives).

Each pair comes from a single-bug task of the suite: the same behaviour-preserving rewrite
(``coderefine.bench.rewrite``) is applied to the clean function and to its mutant. The pair is kept only
if the clean rewrite keeps the library's whole suite green, the mutated rewrite fails it, ruff alone
flags neither, and the rewrite changes at least three lines. The base of the pull request is the clean
library; its message is a plausible refactoring intent.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Protocol

from coderefine.bench.library import SuiteRun
from coderefine.bench.mutate import FunctionInfo, function_text, sites
from coderefine.bench.rewrite import intent_for, rewrite_function
from coderefine.bench.suite import Edit, LibraryTask, differing_lines

MIN_REWRITTEN_LINES = 3
MAX_MUTANT_LINES = 3


def review_pairs(count: int) -> int:
    """How many review pairs a suite of ``count`` requested tasks gets: one for every eight."""
    return max(1, count // 8)


class _Checker(Protocol):
    label: str
    rng: random.Random

    def failing(self, path: str, text: str) -> SuiteRun | None: ...
    def ruff_codes(self, path: str, text: str) -> list[str]: ...
    def split(self, run: SuiteRun) -> tuple[tuple[str, ...], tuple[str, ...]]: ...
    def progress(self, message: str) -> None: ...


def review_tasks(
    checker: _Checker, name: str, tasks: Sequence[LibraryTask], texts: Mapping[str, str], want: int
) -> list[LibraryTask]:
    """Up to ``want`` pairs (a review task with a mutant, a negative without), from the single-bug tasks
    of ``tasks`` (one pair per function), checked against the library's suite."""
    found: list[LibraryTask] = []
    seen: set[tuple[str, str]] = set()
    for task in tasks:
        if len(found) >= 2 * want:
            break
        key = (task.path, task.function)
        if task.kind != "bug" or task.shape != "single" or key in seen:
            continue
        seen.add(key)
        pair = _pair(checker, name, task, texts[task.path], len(found) // 2)
        if pair:
            found += pair
            checker.progress(f"{checker.label}: review pair {len(found) // 2}/{want} ({task.function})")
    return found


def _pair(checker: _Checker, name: str, task: LibraryTask, clean: str, number: int) -> list[LibraryTask]:
    seed = checker.rng.randrange(1 << 30)
    mutant = task.start_text(clean)
    meant = rewrite_function(clean, task.function, seed)
    head = rewrite_function(mutant, task.function, seed)
    if not meant.kinds or meant.kinds != head.kinds:
        return []
    rewritten = differing_lines(clean, meant.text)
    bug_lines = differing_lines(meant.text, head.text)
    if len(rewritten) < MIN_REWRITTEN_LINES or not 0 < len(bug_lines) <= MAX_MUTANT_LINES:
        return []
    codes = checker.ruff_codes(task.path, clean)
    if any(checker.ruff_codes(task.path, t.text) != codes for t in (meant, head)):
        return []
    green = checker.failing(task.path, meant.text)
    if green is None or green.failed() or not green.passed():
        return []  # the rewrite is not behaviour-preserving here: no pair
    red = checker.failing(task.path, head.text)
    if red is None or not red.failed():
        return []
    info = _function(clean, task.function)
    meant_info, head_info = _function(meant.text, task.function), _function(head.text, task.function)
    if info is None or meant_info is None or head_info is None:
        return []
    before = function_text(clean, info)
    intended = function_text(meant.text, meant_info)
    visible, hidden = checker.split(red)
    shape = "+".join(meant.kinds)
    review = LibraryTask(
        task_id=f"{name}/review-{number:03d}",
        kind="review",
        shape=shape,
        strength="refactor",
        mutation=task.mutation,
        path=task.path,
        function=task.function,
        line=bug_lines[0],
        intent=intent_for(task.function, meant.kinds, seed, meant.spelled_out),
        edits=(Edit(before, function_text(head.text, head_info)),),
        visible=visible,
        hidden=hidden,
        module_lines=len(clean.splitlines()),
        intended=intended,
    )
    negative = replace(
        review,
        task_id=f"{name}/review-clean-{number:03d}",
        kind="review-clean",
        mutation="none",
        line=rewritten[0],
        edits=(Edit(before, intended),),
        visible=(),
        hidden=(),
    )
    return [review, negative]


def _function(text: str, qualname: str) -> FunctionInfo | None:
    return next((info for info in sites(text)[1] if info.qualname == qualname), None)
