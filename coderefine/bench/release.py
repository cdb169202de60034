"""``release`` tasks: real changes between two releases of a library (``make-suite NAME==OLD
--upgrade-to NEW``).

The suite's source is NEW's tree. NEW's tests that fail with OLD's code in place of the library files NEW
changed, and pass on NEW's, are the fail-to-pass tests; those that pass on both are the pass-to-pass ones.
Each fail-to-pass test reaches some of the changed files (the lines NEW changed that it runs, from the
baseline's per-test line trace); files reached by one test belong to one change, and each such change is
a task: its files put back to OLD's text, kept when the tests notice. A change too large for one task is
split by function into pieces (``pieces.py``), each a task of its own. The intent is NEW's changelog entry
where the source distribution has one, else a user's description of the failing tests. The project keeps
only the visible fail-to-pass tests; the held-back ones and the whole pass-to-pass suite score.
"""

from __future__ import annotations

import difflib
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from coderefine.bench.builder import SLOW_RETRY, Builder
from coderefine.bench.counts import plural
from coderefine.bench.library import SUITE_TIMEOUT, TEST_TIMEOUT, SuiteRun, run_suite
from coderefine.bench.pieces import split_change
from coderefine.bench.release_intent import changed_definitions, release_intent
from coderefine.bench.suite import RELEASE_KIND, Edit, LibraryTask, differing_lines, test_function
from coderefine.errors import UsageError

MAX_FILES = 4  # a change over more files than this is a rewrite, not a task
MAX_LINES = 400  # nor is one that changes more lines than this (removed plus added)


@dataclass(frozen=True)
class Change:
    """One coherent change of the release: its files (OLD's and NEW's text) and the tests that reach it."""

    files: tuple[str, ...]
    tests: tuple[str, ...]


@dataclass(frozen=True)
class Candidate:
    """What one task would put back: its files' start texts, and whether it is a piece of a larger
    change (split by function) rather than a whole coherent change."""

    starts: Mapping[str, str]
    piece: bool = False

    @property
    def files(self) -> tuple[str, ...]:
        return tuple(self.starts)


@dataclass(frozen=True)
class ReleaseBuild:
    tasks: list[LibraryTask]
    fail_to_pass: int
    pass_to_pass: int
    changed_files: int
    # Each change (or piece of one) too large to be a task: where, its size and its fail-to-pass tests.
    left_out: tuple[str, ...] = ()
    unnoticed: int = 0  # candidates that failed no test when put back

    def reason(self) -> str:
        """Why the release gave no task, in words that say what to try."""
        if not self.fail_to_pass:
            return (
                "no test of the new release fails with the old code (no fail-to-pass test): its changes "
                "are not tested by the tests in its source distribution; try another pair"
            )
        parts = []
        if self.left_out:
            parts.append("too large to be a task even split by function: " + "; ".join(self.left_out))
        if self.unnoticed:
            parts.append(f"{plural(self.unnoticed, 'change')} put back alone failed no test")
        detail = "; ".join(parts) or "no change that its tests reach"
        return f"{plural(self.fail_to_pass, 'fail-to-pass test')}, but no task: {detail}"


def changed_modules(old_tree: Path, tree: Path, modules: Sequence[str]) -> dict[str, tuple[str, str]]:
    """The library modules of NEW (``modules``, in ``tree``) that OLD also has, with a different text:
    path -> (OLD's text, NEW's text). Modules NEW added stay as NEW has them; OLD's that do not compile
    here cannot be a task's start."""
    found = {}
    for path in modules:
        before = old_tree / path
        if not before.is_file():
            continue
        old, new = before.read_text("utf-8", errors="replace"), (tree / path).read_text("utf-8")
        if old != new and _compiles(old):
            # Both end in a newline (the line numbers stay): an edit block cannot say "no newline at
            # the end of the file", so the oracle could not put a file without one back.
            if not new.endswith("\n"):
                new += "\n"
                (tree / path).write_text(new, "utf-8")
            found[path] = (old if old.endswith("\n") else old + "\n", new)
    return found


def release_tasks(
    builder: Builder,
    name: str,
    new_version: str,
    changed: Mapping[str, tuple[str, str]],
    baseline: SuiteRun,
    count: int,
) -> ReleaseBuild:
    label = builder.label
    if not changed:
        raise UsageError(f"{label}: no library module changed between the releases; choose other versions")
    files = f"{len(changed)} changed file{'s' if len(changed) != 1 else ''}"
    builder.progress(f"{label}: running the new tests on the old code ({files})")
    old_run = _with_texts(builder, {p: old for p, (old, _) in changed.items()}, None, whole=True)
    green = baseline.passed()
    # A test file that cannot be imported with the old code (it imports a new name) has no outcomes:
    # its tests fail too.
    fail_to_pass = green - old_run.passed()
    pass_to_pass = green & old_run.passed()
    counted = plural(len(fail_to_pass), "fail-to-pass test")
    builder.progress(f"{label}: {counted}, {len(pass_to_pass)} pass-to-pass")
    candidates, left_out = _candidates(builder, changed, fail_to_pass)
    found: list[LibraryTask] = []
    unnoticed = 0
    prefix = f"{name}-{new_version}"
    for candidate in candidates:
        if len(found) >= count:
            break
        texts = {p: (start, changed[p][1]) for p, start in candidate.starts.items()}
        only = _tests_for(builder, texts)
        run = _with_texts(builder, candidate.starts, only)
        failing = (green if only is None else green & frozenset(only)) - run.passed()
        if not run.finished or run.hung() or not failing:
            unnoticed += run.finished and not run.hung()
            continue
        visible, hidden = split(failing, builder.rng)
        primary = candidate.files[0]
        start, new = texts[primary]
        lines = differing_lines(start, new)
        intent, strength = release_intent(
            builder.tree, new_version, texts, run, visible, piece=candidate.piece
        )
        found.append(
            LibraryTask(
                task_id=f"{prefix}/release-{len(found):03d}",
                kind=RELEASE_KIND,
                shape="one-file" if len(candidate.files) == 1 else "multi-file",
                strength=strength,
                mutation="release",
                path=primary,
                function=",".join(changed_definitions(new, lines)[:4]),
                line=lines[0] if lines else 1,
                intent=intent,
                edits=tuple(Edit(new, start, p) for p, (start, new) in texts.items()),
                visible=visible,
                hidden=hidden,
                module_lines=len(new.splitlines()),
                files=candidate.files if len(candidate.files) > 1 else (),
            )
        )
        builder.progress(f"{label}: release task {len(found)} ({', '.join(candidate.files)})")
    return ReleaseBuild(found, len(fail_to_pass), len(pass_to_pass), len(changed), tuple(left_out), unnoticed)


def _candidates(
    builder: Builder, changed: Mapping[str, tuple[str, str]], fail_to_pass: frozenset[str]
) -> tuple[list[Candidate], list[str]]:
    """A candidate per coherent change within the size limits; a larger one split by function into
    pieces that are (``pieces.py``). Also what is left out: each piece still too large (or one that no
    longer compiles), with its fail-to-pass tests, and the tests that reach no piece."""
    label = builder.label
    found: list[Candidate] = []
    left_out: list[str] = []
    for change in coherent_changes(builder, changed, fail_to_pass):
        size = sum(_lines_changed(*changed[p]) for p in change.files)
        if len(change.files) <= MAX_FILES and size <= MAX_LINES:
            found.append(Candidate({p: changed[p][0] for p in change.files}))
            continue
        pieces, unreached = split_change(builder.coverage, changed, change.files, change.tests)
        kept = 0
        for piece in pieces:
            tests = plural(len(piece.tests), "fail-to-pass test")
            if len(piece.files) > MAX_FILES or piece.size > MAX_LINES:
                left_out.append(f"{piece.describe()}: {piece.size} lines, {tests}")
            elif not all(_compiles(text) for text in piece.starts.values()):
                left_out.append(f"{piece.describe()}: does not compile put back alone, {tests}")
            else:
                found.append(Candidate(dict(piece.starts), piece=True))
                kept += 1
        if unreached:
            left_out.append(
                f"{', '.join(change.files)}: {plural(len(unreached), 'fail-to-pass test')} "
                f"{'runs' if len(unreached) == 1 else 'run'} no changed definition"
            )
        builder.progress(
            f"{label}: {', '.join(change.files)}: {size} lines changed, too large for one task: split by "
            f"function into {plural(len(pieces), 'piece')}, {kept} within the limits"
        )
    return found, left_out


def split(failing: frozenset[str], rng: random.Random) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The failing tests split by test function, as for mutants: about half stay visible (at least one)."""
    functions = sorted({test_function(n) for n in failing})
    rng.shuffle(functions)
    hidden_functions = set(functions[: len(functions) // 2])
    visible = tuple(sorted(n for n in failing if test_function(n) not in hidden_functions))
    hidden = tuple(sorted(n for n in failing if test_function(n) in hidden_functions))
    return visible, hidden


def coherent_changes(
    builder: Builder, changed: Mapping[str, tuple[str, str]], fail_to_pass: frozenset[str]
) -> list[Change]:
    """The changed files grouped so that the files one fail-to-pass test reaches are in one group; each
    group with its tests, the group whose file comes first first. A test reaches a file when it runs a
    line NEW changed there (failing that, any line of it)."""
    coverage = builder.coverage
    index = {nodeid: i for i, nodeid in enumerate(coverage.tests)}
    differing = {p: set(differing_lines(old, new)) for p, (old, new) in changed.items()}
    parent = {p: p for p in changed}

    def root(path: str) -> str:
        while parent[path] != path:
            path = parent[path]
        return path

    reached: dict[str, tuple[str, ...]] = {}
    for nodeid in sorted(fail_to_pass):
        number = index.get(nodeid)
        if number is None:
            continue
        by_change = [p for p in changed if _runs(coverage.lines.get(p, {}), differing[p], number)]
        files = by_change or [p for p in changed if _runs(coverage.lines.get(p, {}), None, number)]
        if not files:
            continue
        reached[nodeid] = tuple(files)
        for other in files[1:]:
            parent[root(other)] = root(files[0])
    groups: dict[str, list[str]] = {}
    for path in sorted(changed):
        groups.setdefault(root(path), []).append(path)
    changes = []
    for files in groups.values():
        tests = tuple(n for n, reach in reached.items() if set(reach) & set(files))
        if tests:
            # The file most of its tests reach first: the task's own ``path``.
            ordered = sorted(files, key=lambda p: (-sum(p in reached[n] for n in tests), p))
            changes.append(Change(tuple(ordered), tests))
    return changes


def _runs(by_line: Mapping[int, tuple[int, ...]], lines: set[int] | None, number: int) -> bool:
    return any(number in tests for line, tests in by_line.items() if lines is None or line in lines)


def _tests_for(builder: Builder, texts: Mapping[str, tuple[str, str]]) -> tuple[str, ...] | None:
    """The tests that run a line of NEW that the task puts back; None (all) when one runs at import."""
    found: set[str] = set()
    for path, (start, new) in texts.items():
        only = builder.coverage.tests_for(path, differing_lines(start, new))
        if only is None:
            return None
        found.update(only)
    return tuple(sorted(found))


def _with_texts(
    builder: Builder, texts: Mapping[str, str], only: tuple[str, ...] | None, *, whole: bool = False
) -> SuiteRun:
    """The suite's run with ``texts`` in place of their files (put back after); a run in which a test
    passed its limit runs again with a longer one, as for mutants. ``whole``: the baseline's limits."""
    originals = {p: (builder.tree / p).read_text("utf-8") for p in texts}
    try:
        for path, text in texts.items():
            (builder.tree / path).write_text(text, "utf-8")
        run = _run(builder, only, 1, whole)
        if run.finished and run.hung():
            run = _run(builder, only, SLOW_RETRY, whole)
    finally:
        for path, text in originals.items():
            (builder.tree / path).write_text(text, "utf-8")
    return run


def _run(builder: Builder, only: tuple[str, ...] | None, slack: int, whole: bool) -> SuiteRun:
    # A test file that imports what the old code lacks is a collection error: the other files still run.
    extra = ["--continue-on-collection-errors"]
    if whole:
        python, tree, skip = builder.python, builder.tree, builder.deselect
        return run_suite(python, tree, builder.runner, builder.environ, deselect=skip, extra=extra)
    # A release has a run per change, not per mutant: the baseline's limits, so that a loaded machine
    # does not decide which changes become tasks (a mutant's 30-second limit left one out at load 12).
    return run_suite(
        builder.python,
        builder.tree,
        builder.runner,
        builder.environ,
        only=only,
        deselect=builder.deselect,
        timeout=SUITE_TIMEOUT * (2 if slack > 1 else 1),
        test_timeout=TEST_TIMEOUT * slack,
        warm=builder.warm,
        extra=extra,
    )


def _lines_changed(old: str, new: str) -> int:
    diff = difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=0)
    return sum(1 for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---"))


def _compiles(text: str) -> bool:
    try:
        compile(text, "<old release>", "exec")
    except (SyntaxError, ValueError):
        return False
    return True
