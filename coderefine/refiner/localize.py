"""Where the failing tests point: the definitions they call, ranked against the passing tests that ran
beside them (spectrum-based fault localization, by the Ochiai coefficient).

A definition every failing test calls and no passing test does is the first place a fix goes; one that
every test calls (a constructor, a shared helper) says little. Coverage is by definition, not by line:
what a request can show whole, and what the test run records cheaply (``CallRecord``, a profile hook
in the one run that asks for it).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from coderefine.edits.symbols import Symbol, symbols
from coderefine.refiner.naming import named_after
from coderefine.signals.base import CallRecord
from coderefine.signals.related import is_test_file

TOP = 5  # definitions named in a request
# Of those, the ones shown whole: within this share of the best score. With tabulate's `_padleft` broken
# (137 tests fail) the top five were all helpers every failing test calls, and showing them whole took
# the critic's call from 5.3k to 7.2k tokens; the first two (0.92 and 0.90) are the ones that matter.
NEAR_BEST = 0.9
TEST_FOLDERS = frozenset({"tests", "test", "testing"})


@dataclass(frozen=True)
class Suspect:
    """One definition the failing tests call, with how many failing and passing tests call it."""

    path: str
    name: str  # qualified within its module ("Class.method")
    start: int  # first line, decorators included
    end: int
    failed: int
    passed: int
    score: float  # Ochiai: failed / sqrt(all failing * (failed + passed))
    under_review: bool


@dataclass(frozen=True)
class Localization:
    """The suspects, best first, and how many failing and passing tests the ranking rests on."""

    suspects: tuple[Suspect, ...]
    failing: int
    passing: int
    # The best suspect, then the best among the failing tests that do not run it, and so on (``_covering``):
    # with two or three bugs the tests that fail for the second run a definition that ranks below the
    # first bug's, and a cut at the best score alone left it an outline line.
    covering: tuple[Suspect, ...] = ()
    # The definitions failing tests are named after, among those they run (``naming.py``), most named
    # first: a spectrum cannot single out a function the passing tests run too.
    named: tuple[Suspect, ...] = ()

    def top(self, count: int = TOP) -> tuple[Suspect, ...]:
        """The best ``count`` suspects, then any failing test's own best that they leave out, then the
        best under review when none of those is."""
        best = self.suspects[:count]
        chosen = best + tuple(s for s in self.covering if s not in best)[: max(0, count - 2)]
        chosen += tuple(s for s in self.named if s not in chosen)[: max(0, count - 2)]
        if any(s.under_review for s in chosen):
            return chosen
        return chosen + tuple(s for s in self.suspects if s.under_review)[:1]

    def lines(self, texts: Mapping[str, str], count: int = TOP) -> dict[str, frozenset[int]]:
        """The lines of the top suspects under review in ``texts`` (found again by name: a revision
        moves them), per file: what a view keeps whole. Only those scored near the best, and those
        that cover the failing tests the best does not run: one that ranks far below is named, not
        shown."""
        found: dict[str, set[int]] = {}
        # Ranked among the code under review: only it can be shown, and the change goes there. Suspects
        # read-only (pyflakes' message classes, built only when a wrong message is reported) can rank
        # above every one under review, which left the views with nothing the tests point at.
        ranked = [s for s in self.suspects if s.under_review and s.path in texts]
        best = ranked[0].score if ranked else 0.0
        near = [s for s in ranked[:count] if s.score >= best * NEAR_BEST]
        others = [s for s in (*self.covering, *self.named) if s in ranked and s not in near]
        for suspect in near + list(dict.fromkeys(others)):
            now = [s for s in symbols(texts[suspect.path]) if s.name == suspect.name]
            start, end = (now[0].line, now[0].end_line) if now else (suspect.start, suspect.end)
            found.setdefault(suspect.path, set()).update(range(start, end + 1))
        return {path: frozenset(lines) for path, lines in found.items()}

    def describe(self, suspect: Suspect) -> str:
        where = "" if suspect.under_review else " (not under review: read-only)"
        named = "; a failing test is named after it" if suspect in self.named else ""
        return (
            f"- {suspect.path}:{suspect.start} {suspect.name}{where}: run by {suspect.failed} of "
            f"{self.failing} failing tests, {suspect.passed} of {self.passing} passing{named}"
        )

    def section(self, count: int = TOP) -> str:
        """The request's lines on where the failing tests point ("" when nothing does)."""
        top = self.top(count)
        if not top:
            return ""
        rows = "\n".join(self.describe(s) for s in top)
        return (
            "Where the failing tests point (the definitions they call, ranked against the passing tests "
            "of the same files; a definition every test calls says little):\n" + rows
        )


def is_test_code(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return is_test_file(path) or parts[-1:] == ("conftest.py",) or bool(TEST_FOLDERS & set(parts[:-1]))


def localize(
    runs: Sequence[CallRecord],
    read: Callable[[str], str | None],
    under_review: Collection[str],
    texts: Mapping[str, str] | None = None,
) -> Localization:
    """Rank the functions (and methods) of the project's code that the failing tests of ``runs`` call.
    ``read`` gives a project file's text; ``texts`` the files under review as they are now."""
    failing = [r for r in runs if r.failed]
    passing = [r for r in runs if not r.failed]
    if not failing:
        return Localization((), 0, len(passing))
    definitions: dict[str, list[Symbol]] = {}
    counts: dict[tuple[str, Symbol], list[int]] = {}
    called_by_failing: list[set[tuple[str, Symbol]]] = []
    for index, group in enumerate((failing, passing)):
        for run in group:
            keys = _definitions_of(run.called, definitions, read, texts or {})
            if index == 0:
                called_by_failing.append(keys)
            for symbol_key in keys:
                counts.setdefault(symbol_key, [0, 0])[index] += 1
    by_key = {
        key: Suspect(
            key[0],
            key[1].name,
            key[1].line,
            key[1].end_line,
            failed,
            passed,
            failed / math.sqrt(len(failing) * (failed + passed)),
            key[0] in under_review,
        )
        for key, (failed, passed) in counts.items()
        if failed
    }
    suspects = sorted(by_key.values(), key=_rank)
    passed = {key: counts[key][1] for key in by_key}
    # Each failing test's own suspect is looked for in the code under review when it runs any: a fix
    # goes there, and a read-only definition covering a test would hide the one that can change.
    reviewed = [{k for k in keys if k[0] in under_review} for keys in called_by_failing]
    own = reviewed if any(reviewed) else called_by_failing
    return Localization(
        tuple(suspects),
        len(failing),
        len(passing),
        _covering(own, passed, by_key),
        _named(failing, own, by_key),
    )


def _named(
    failing: Sequence[CallRecord],
    called: Sequence[set[tuple[str, Symbol]]],
    by_key: Mapping[tuple[str, Symbol], Suspect],
) -> tuple[Suspect, ...]:
    """The definitions the failing tests are named after, among those each runs: the most named first,
    then by rank (at most ``TOP``)."""
    votes: dict[tuple[str, Symbol], int] = {}
    for run, keys in zip(failing, called, strict=True):
        by_name: dict[str, list[tuple[str, Symbol]]] = {}
        for key in keys:
            by_name.setdefault(key[1].name.rsplit(".", 1)[-1], []).append(key)
        for name in named_after(run.nodeid, by_name):
            for key in by_name[name]:
                votes[key] = votes.get(key, 0) + 1
    ranked = sorted(votes, key=lambda key: (-votes[key], _rank(by_key[key])))
    return tuple(by_key[key] for key in ranked[:TOP])


def _covering(
    called_by_failing: Sequence[set[tuple[str, Symbol]]],
    passed: Mapping[tuple[str, Symbol], int],
    by_key: Mapping[tuple[str, Symbol], Suspect],
) -> tuple[Suspect, ...]:
    """The best suspect, then again among the failing tests that do not run it, until every failing
    test runs one of them (at most ``TOP``). A failing test runs its fault, so tests that do not run
    the first suspect fail for another: with two bugs, the second's tests rank it first among them."""
    chosen: list[Suspect] = []
    left = [keys for keys in called_by_failing if keys]
    while left and len(chosen) < TOP:
        failed: dict[tuple[str, Symbol], int] = {}
        for keys in left:
            for key in keys:
                failed[key] = failed.get(key, 0) + 1
        candidates = list(failed)
        score = [failed[k] / math.sqrt(len(left) * (failed[k] + passed[k])) for k in candidates]
        first = min((-score[i], *_rank(by_key[k])[1:], i) for i, k in enumerate(candidates))
        best = candidates[first[-1]]
        chosen.append(by_key[best])
        left = [keys for keys in left if best not in keys]
    return tuple(chosen)


def _rank(suspect: Suspect) -> tuple[float, int, bool, int, str, int]:
    """Best first. Ties: fewer passing tests first, then the code under review, then the shorter
    definition."""
    s = suspect
    return (-s.score, s.passed, not s.under_review, s.end - s.start, s.path, s.start)


def _definitions_of(
    called: Iterable[tuple[str, int]],
    cache: dict[str, list[Symbol]],
    read: Callable[[str], str | None],
    texts: Mapping[str, str],
) -> set[tuple[str, Symbol]]:
    """The innermost function holding each called code object's first line (a lambda or a
    comprehension counts for the function it is written in; module code for none)."""
    found: set[tuple[str, Symbol]] = set()
    for path, line in called:
        if is_test_code(path):
            continue
        if path not in cache:
            text = texts.get(path)
            text = read(path) if text is None else text
            cache[path] = [s for s in symbols(text or "") if s.kind == "function"]
        holding = [s for s in cache[path] if s.line <= line <= s.end_line]
        if holding:
            found.add((path, max(holding, key=lambda s: s.line)))
    return found
