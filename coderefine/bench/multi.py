"""Multi-location tasks: three bugs in three definitions of one module, and two bugs in two files.

What a request shows decides these more than any other task: one-shot, signals-only and self-refine all
failed a two-bug task whose second bug sat in a definition the critic's request showed only as an outline
line. Each bug is a kept mutant (some test noticed it alone); combined, each must still be noticed by a
visible failing test (the tests that fail for it alone and with the others), or the candidate is dropped:
a bug no visible test shows is a task about guessing, not about what the request shows. Built last, from
the mutants already kept, so that the earlier tasks and the seed's draws stay as they were.
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


class Builds(Protocol):
    """What the family needs of the suite's builder."""

    def failing_files(self, texts: Mapping[str, str]) -> SuiteRun | None: ...
    def split(self, run: SuiteRun) -> tuple[tuple[str, ...], tuple[str, ...]]: ...
    def functions(self, path: str, text: str) -> dict[str, FunctionInfo]: ...


def each_shown(
    visible: Sequence[str], hidden: Sequence[str], alone: Sequence[SuiteRun]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``visible`` and ``hidden`` with every bug shown by a visible failing test: for a bug whose own
    failing tests (its run ``alone``) are all held back, the first of them that fails with the others
    moves from hidden to visible (none does when another bug masks it)."""
    shown, held = list(visible), list(hidden)
    for own in alone:
        if not set(own.failed()) & set(shown):
            movable = sorted(set(own.failed()) & set(held))
            if movable:
                held.remove(movable[0])
                shown.append(movable[0])
    return tuple(sorted(shown)), tuple(sorted(held))


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
    own failing tests no longer fail with the others (one bug masking another)."""
    mutated = {path: apply(texts[path], sites) for path, sites in chosen.items()}
    run = builder.failing_files(mutated)
    if run is None or not run.failed():
        return None
    failed = set(run.failed())
    if any(not set(own.failed()) & failed for own in alone):
        return None
    shown, held = each_shown(*builder.split(run), alone)
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
