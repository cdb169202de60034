"""Where the failing tests point: the definitions they call, ranked against the passing tests that ran
beside them (spectrum-based fault localization, by the Ochiai coefficient).

A definition every failing test calls and no passing test does is the first place a fix goes; one that
every test calls (a constructor, a shared helper) says little. Suspects are definitions, what a
request can show whole (``CallRecord``, recorded in the one run that asks for it); where that run also
recorded the lines of the files under review, a definition's best line is kept beside it: a branch only
the failing tests take, in a handler every test runs, that a ranking by definition cannot single out.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
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
TIED = 3  # suspects that tie for a failing test's best, all kept
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
    # Its line that only (or mostly) failing tests ran, when that line scores above the definition:
    # the line, how many failing and passing tests ran it, and its score (0 when none does).
    line: int = 0
    line_failed: int = 0
    line_passed: int = 0
    line_score: float = 0.0


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

    def tied(self, count: int = TOP) -> tuple[Suspect, ...]:
        """The suspects under review tied at the best score, when more than ``count`` are: the tests'
        coverage singles none of them out (pyflakes 3.0.1: one failing test beside four passing runs
        dozens of the checker's methods that no passing test runs), so none is shown or named for it."""
        ranked = [s for s in self.suspects if s.under_review]
        tie = tuple(s for s in ranked if s.score == ranked[0].score) if ranked else ()
        return tie if len(tie) > count else ()

    def top(self, count: int = TOP) -> tuple[Suspect, ...]:
        """The best ``count`` suspects, then any failing test's own best that they leave out, then the
        best under review when none of those is."""
        tied = self.tied(count)
        best = tuple(s for s in self.suspects if s not in tied)[:count]
        chosen = best + tuple(s for s in self.covering if s not in best)[: max(0, count - 2)]
        chosen += tuple(s for s in self.named if s not in chosen)[: max(0, count - 2)]
        if any(s.under_review for s in chosen) or tied:
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
        near = [] if self.tied(count) else [s for s in ranked[:count] if s.score >= best * NEAR_BEST]
        others = [s for s in (*self.covering, *self.named) if s in ranked and s not in near]
        for suspect in near + list(dict.fromkeys(others)):
            now = [s for s in symbols(texts[suspect.path]) if s.name == suspect.name]
            start, end = (now[0].line, now[0].end_line) if now else (suspect.start, suspect.end)
            found.setdefault(suspect.path, set()).update(range(start, end + 1))
        return {path: frozenset(lines) for path, lines in found.items()}

    def describe(self, suspect: Suspect) -> str:
        where = "" if suspect.under_review else " (not under review: read-only)"
        named = "; a failing test is named after it" if suspect in self.named else ""
        line = (
            f"; its line {suspect.line} by {suspect.line_failed} failing, {suspect.line_passed} passing"
            if suspect.line
            else ""
        )
        return (
            f"- {suspect.path}:{suspect.start} {suspect.name}{where}: run by {suspect.failed} of "
            f"{self.failing} failing tests, {suspect.passed} of {self.passing} passing{line}{named}"
        )

    def section(self, count: int = TOP) -> str:
        """The request's lines on where the failing tests point ("" when nothing does)."""
        top, tied = self.top(count), self.tied(count)
        rows = [self.describe(s) for s in top]
        if tied:
            first = tied[0]
            rows.append(
                f"- {len(tied)} definitions under review tie for the best (run by {first.failed} of "
                f"{self.failing} failing tests, {first.passed} of {self.passing} passing, such as "
                f"{first.name}): the tests' coverage does not single one out"
            )
        if not rows:
            return ""
        return (
            "Where the failing tests point (the definitions they call, ranked against the passing tests "
            "of the same files; a definition every test calls says little):\n" + "\n".join(rows)
        )


def is_test_code(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return is_test_file(path) or parts[-1:] == ("conftest.py",) or bool(TEST_FOLDERS & set(parts[:-1]))


Key = tuple[str, Symbol]
# A definition (line 0) or one line of it: the units the tests' coverage is counted by.
Unit = tuple[Key, int]


def localize(
    runs: Sequence[CallRecord],
    read: Callable[[str], str | None],
    under_review: Collection[str],
    texts: Mapping[str, str] | None = None,
) -> Localization:
    """Rank the functions (and methods) of the project's code that the failing tests of ``runs`` call.
    ``read`` gives a project file's text; ``texts`` the files under review as they are now. The ranking
    is by definition; the best line of each (when the runs recorded lines, only of the files under
    review) is kept beside it, and ``_covering`` reads it."""
    failing = [r for r in runs if r.failed]
    passing = [r for r in runs if not r.failed]
    if not failing:
        return Localization((), 0, len(passing))
    holders = _Holders(read, texts or {})
    counts: dict[Unit, list[int]] = {}
    run_by_failing: list[set[Unit]] = []
    for index, group in enumerate((failing, passing)):
        for run in group:
            units = _units_of(run, holders)
            if index == 0:
                run_by_failing.append(units)
            for unit in units:
                counts.setdefault(unit, [0, 0])[index] += 1
    passed = {unit: counts[unit][1] for unit in counts}
    score = {unit: _ochiai(failed, len(failing), passed[unit]) for unit, (failed, _) in counts.items()}
    # Per definition its best unit: a line only when it scores above the whole definition. By lines the
    # tests' evidence gathers round one decision: with tabulate's `_padleft` broken, the lines choosing
    # it in three callers scored 0.89-0.91 beside its own 0.92, and the views took them all (a critic's
    # call 4.9k -> 6.3k tokens). So lines do not rank; they are read where a definition cannot tell.
    best: dict[Key, Unit] = {}
    for unit in sorted(score, key=lambda u: (-score[u], u[1])):
        if unit[0] not in best and (unit[0], 0) in counts and score[unit] > 0:
            best[unit[0]] = unit
    by_key = {key: _suspect(unit, counts, score, key[0] in under_review) for key, unit in best.items()}
    suspects = sorted(by_key.values(), key=_rank)
    # Each failing test's own suspect is looked for in the code under review when it runs any: a fix
    # goes there, and a read-only definition covering a test would hide the one that can change.
    reviewed = [{u for u in units if u[0][0] in under_review and u[0] in by_key} for units in run_by_failing]
    own = reviewed if any(reviewed) else [{u for u in units if u[0] in by_key} for units in run_by_failing]
    return Localization(
        tuple(suspects),
        len(failing),
        len(passing),
        _covering(own, passed, by_key),
        _named(failing, [{u[0] for u in units} for units in own], by_key),
    )


def _ochiai(failed: int, failing: int, passed: int) -> float:
    return failed / math.sqrt(failing * (failed + passed))


def _suspect(
    best: Unit, counts: Mapping[Unit, list[int]], score: Mapping[Unit, float], under_review: bool
) -> Suspect:
    (path, symbol), line = best
    whole = ((path, symbol), 0)
    failed, passed = counts[whole]
    line_failed, line_passed = counts[best] if line else (0, 0)
    return Suspect(
        path,
        symbol.name,
        symbol.line,
        symbol.end_line,
        failed,
        passed,
        score[whole],
        under_review,
        line,
        line_failed,
        line_passed,
        score[best] if line else 0.0,
    )


def _named(
    failing: Sequence[CallRecord],
    called: Sequence[set[Key]],
    by_key: Mapping[Key, Suspect],
) -> tuple[Suspect, ...]:
    """The definitions the failing tests are named after, among those each runs: the most named first,
    then by rank (at most ``TOP``)."""
    votes: dict[Key, int] = {}
    for run, keys in zip(failing, called, strict=True):
        by_name: dict[str, list[Key]] = {}
        for key in keys:
            by_name.setdefault(key[1].name.rsplit(".", 1)[-1], []).append(key)
        for name in named_after(run.nodeid, by_name):
            for key in by_name[name]:
                votes[key] = votes.get(key, 0) + 1
    ranked = sorted(votes, key=lambda key: (-votes[key], _rank(by_key[key])))
    return tuple(by_key[key] for key in ranked[:TOP])


def _covering(
    run_by_failing: Sequence[set[Unit]],
    passed: Mapping[Unit, int],
    by_key: Mapping[Key, Suspect],
) -> tuple[Suspect, ...]:
    """The best suspect, then again among the failing tests that do not run it, until every failing
    test runs one of them (at most ``TOP``). A failing test runs its fault, so tests that do not run
    the first suspect fail for another: with two bugs, the second's tests rank it first among them."""
    chosen: list[Suspect] = []
    left = [units for units in run_by_failing if units]
    while left and len(chosen) < TOP:
        failed: dict[Unit, int] = {}
        for units in left:
            for unit in units:
                failed[unit] = failed.get(unit, 0) + 1
        whole: dict[Key, float] = {}
        branch: dict[Key, float] = {}
        for unit, count in failed.items():
            scores = branch if unit[1] else whole
            scores[unit[0]] = max(scores.get(unit[0], 0.0), _ochiai(count, len(left), passed[unit]))
        if not whole:  # lines of a generator started before the test: no call of it recorded
            break
        best = min(whole, key=lambda k: (-whole[k], *_rank(by_key[k])[1:]))
        # More tied for the best than a view could show: none of them is evidence.
        picks = [best] if sum(whole[k] == whole[best] for k in whole) <= TOP else []
        # A line only these failing tests ran that scores above the best definition: a branch every
        # passing test skips. Beside the best, not instead of it: one failing test alone runs many
        # lines no passing test runs (1.0 each), so the ties are kept too, and a fault that dropped a
        # line leaves no line to find.
        top = max(branch.values(), default=0.0)
        if top > whole[best]:
            tied = sorted((k for k in branch if branch[k] == top), key=lambda k: _rank(by_key[k])[1:])
            picks += tied[:TIED]
        chosen.extend(by_key[k] for k in dict.fromkeys(picks) if by_key[k] not in chosen)
        left = [units for units in left if (best, 0) not in units]
    return tuple(chosen[:TOP])


def _rank(suspect: Suspect) -> tuple[float, int, bool, int, str, int]:
    """Best first. Ties: fewer passing tests first, then the code under review, then the shorter
    definition."""
    s = suspect
    return (-s.score, s.passed, not s.under_review, s.end - s.start, s.path, s.start)


class _Holders:
    """The innermost function holding each line of the project's code (None in test code), each file
    read and each line looked up once: a localizing run of pyflakes' tests records 100,000 (test, line)
    pairs."""

    def __init__(self, read: Callable[[str], str | None], texts: Mapping[str, str]) -> None:
        self._read = read
        self._texts = texts
        self._functions: dict[str, list[Symbol]] = {}
        self._found: dict[tuple[str, int], Key | None] = {}

    def of(self, place: tuple[str, int]) -> Key | None:
        try:
            return self._found[place]
        except KeyError:
            pass
        path, line = place
        if path not in self._functions:
            # Test code is never a suspect: it holds no function here.
            self._functions[path] = [] if is_test_code(path) else self._functions_of(path)
        holding = [s for s in self._functions[path] if s.line <= line <= s.end_line]
        key = (path, max(holding, key=lambda s: s.line)) if holding else None
        self._found[place] = key
        return key

    def _functions_of(self, path: str) -> list[Symbol]:
        text = self._texts.get(path)
        text = self._read(path) if text is None else text
        return [s for s in symbols(text or "") if s.kind == "function"]


def _units_of(run: CallRecord, holders: _Holders) -> set[Unit]:
    """The definitions ``run`` called, as the innermost function holding each called code object's
    first line (a lambda or a comprehension counts for the function it is written in; module code for
    none), and the lines it ran, each with the innermost function holding it."""
    found: set[Unit] = set()
    for places, whole in ((run.called, True), (run.lines, False)):
        for place in places:
            key = holders.of(place)
            if key is not None:
                found.add((key, 0 if whole else place[1]))
    return found
