"""Multi-location tasks: three bugs in three definitions of one module, and two bugs in two files.

What a request shows decides these more than any other task: one-shot, signals-only and self-refine all
failed a two-bug task whose second bug sat in a definition the critic's request showed only as an outline
line. Each bug is a kept mutant (some test noticed it alone); combined, each must still be noticed by a
visible failing test (one that fails for it alone and the same way with the others), or the candidate
is dropped: a bug no visible test shows is a task about guessing, not about what the request shows.
Built last, from the mutants already kept, so that the earlier tasks and the seed's draws stay as they
were.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from coderefine.bench.intents import STRENGTHS, bug_intent
from coderefine.bench.library import SuiteRun
from coderefine.bench.mutate import FunctionInfo, Site, apply, changed_function, function_text
from coderefine.bench.suite import Edit, LibraryTask

MULTI_KIND = "multi-location"
THREE = "three-bugs"  # three bugs in three definitions of one module
TWO_FILES = "two-files"  # a bug in each of two modules
SHARE = 12  # of --tasks, how many of each shape are tried for

Mutant = tuple[str, Site, SuiteRun]  # a kept mutant: its module, its site, the run that noticed it
# Second bugs tried for a two-bug task before its first is left unpaired: each try is one run of the
# tests that reach either bug.
PARTNERS_TRIED = 3


class Builds(Protocol):
    """What the family needs of the suite's builder."""

    def failing_files(self, texts: Mapping[str, str]) -> SuiteRun | None: ...
    def split(self, run: SuiteRun) -> tuple[tuple[str, ...], tuple[str, ...]]: ...
    def functions(self, path: str, text: str) -> dict[str, FunctionInfo]: ...


def shown_by(own: SuiteRun, together: SuiteRun) -> frozenset[str]:
    """The tests that fail for a bug alone (``own``) and fail the same way with the others (``together``,
    the same first line of their failure): those that show this bug in the task. A test that fails with
    the others in another way fails for another bug first (toolz: a signature's test crashed in the first
    bug before it reached the second, and no coverage, run or name of it could point there)."""
    return frozenset(
        test
        for test in own.failed() & together.failed()
        if _first_line(own.message(test)) == _first_line(together.message(test))
    )


def _first_line(message: str) -> str:
    return next((line.strip() for line in message.splitlines() if line.strip()), "")


def masked(alone: Sequence[SuiteRun], together: SuiteRun) -> bool:
    """Whether some bug of a task fails no test the same way with the others as alone."""
    return any(not shown_by(own, together) for own in alone)


def each_shown(
    visible: Sequence[str], hidden: Sequence[str], alone: Sequence[SuiteRun], together: SuiteRun
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``visible`` and ``hidden`` with every bug shown by a visible failing test: for a bug none of whose
    tests that show it (``shown_by``; else its own failing tests) is visible, the first of them moves from
    hidden to visible."""
    shown, held = list(visible), list(hidden)
    for own in alone:
        mine = shown_by(own, together) or own.failed() & together.failed()
        if not mine & set(shown):
            movable = sorted(mine & set(held))
            if movable:
                held.remove(movable[0])
                shown.append(movable[0])
    return tuple(sorted(shown)), tuple(sorted(held))


def pair_mutants(
    builder: Builds, firsts: Sequence[Mutant], others: Sequence[Mutant], texts: Mapping[str, str]
) -> list[tuple[str, Site, SuiteRun, Site, SuiteRun, tuple[SuiteRun, SuiteRun]]]:
    """Each mutant with a second one of the same module in another function (two bugs, one outside
    the named function), their run together and each one's alone: the first of at most
    ``PARTNERS_TRIED`` candidates with which each bug still fails a test the way it fails alone. A
    second bug masked by the first (its tests crash in the first before they reach it) makes a task
    of one bug, then another: no evidence of the second can be in its first request."""
    runs = {(path, site.line, site.operator): run for path, site, run in others}
    found = []
    for path, site, run in firsts:
        candidates = [
            s for p, s, _ in others if p == path and s.function != site.function and s.line != site.line
        ]
        for partner in candidates[:PARTNERS_TRIED]:
            alone = (run, runs[(path, partner.line, partner.operator)])
            together = builder.failing_files({path: apply(texts[path], [site, partner])})
            if together is not None and together.failed() and not masked(alone, together):
                found.append((path, site, run, partner, together, alone))
                break
    return found


def multi_location_tasks(
    builder: Builds,
    name: str,
    first: int,
    singles: Sequence[Mutant],
    paired: Sequence[tuple[str, Site, SuiteRun, Site]],
    texts: Mapping[str, str],
    count: int,
) -> list[LibraryTask]:
    """Up to ``count // SHARE`` tasks of each shape, numbered from ``first``: a third bug added to each
    two-bug task's module, in a definition neither of its bugs is in; and two kept mutants of different
    modules together."""
    want = count // SHARE
    runs = {(path, site.line, site.operator): run for path, site, run in singles}
    found: list[LibraryTask] = []
    for path, site, run, other in paired:
        if len(found) >= want:
            break
        taken = {site.function, other.function}
        third = next(
            (s for p, s, _ in singles if p == path and s.function not in taken and s.line != site.line),
            None,
        )
        if third is None or (path, other.line, other.operator) not in runs:
            continue
        alone = [run, runs[(path, other.line, other.operator)], runs[(path, third.line, third.operator)]]
        task = _task(builder, name, first + len(found), {path: [site, other, third]}, alone, texts, THREE)
        if task is not None:
            found.append(task)
    crossed = 0
    for index, (path, site, run) in enumerate(singles):
        if crossed >= want:
            break
        partner = next(((p, s, r) for p, s, r in singles[index + 1 :] if p != path), None)
        if partner is None:
            continue
        chosen = {path: [site], partner[0]: [partner[1]]}
        task = _task(builder, name, first + len(found), chosen, [run, partner[2]], texts, TWO_FILES)
        if task is not None:
            found.append(task)
            crossed += 1
    return found


def _task(
    builder: Builds,
    name: str,
    index: int,
    chosen: Mapping[str, list[Site]],
    alone: Sequence[SuiteRun],
    texts: Mapping[str, str],
    shape: str,
) -> LibraryTask | None:
    """The task of the bugs of ``chosen`` together, or None when their run does not finish or some bug's
    own failing tests no longer fail with the others the way they fail alone (one bug masking another)."""
    mutated = {path: apply(texts[path], sites) for path, sites in chosen.items()}
    run = builder.failing_files(mutated)
    if run is None or not run.failed():
        return None
    if masked(alone, run):
        return None
    shown, held = each_shown(*builder.split(run), alone, run)
    main = next(iter(chosen))
    edits = tuple(
        Edit(
            function_text(texts[path], builder.functions(path, texts[path])[function]),
            changed_function(texts[path], builder.functions(path, texts[path])[function], sites),
            path if path != main else "",
        )
        for path, sites in chosen.items()
        for function in dict.fromkeys(s.function for s in sites)
    )
    first_site = chosen[main][0]
    strength = STRENGTHS[index % len(STRENGTHS)]
    return LibraryTask(
        task_id=f"{name}/{index:03d}",
        kind=MULTI_KIND,
        shape=shape,
        strength=strength,
        mutation="+".join(s.operator for sites in chosen.values() for s in sites),
        path=main,
        function=first_site.function,
        line=first_site.line,
        intent=bug_intent(strength, first_site.function, main, run, tuple(sorted(shown))),
        edits=edits,
        visible=tuple(sorted(shown)),
        hidden=tuple(sorted(held)),
        module_lines=len(texts[main].splitlines()),
        files=tuple(chosen) if len(chosen) > 1 else (),
    )
