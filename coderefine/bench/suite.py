"""Suites built from a real library: the task records, a suite folder on disk, and scoring by its tests.

A suite folder holds ``suite.json`` (the library, its interpreter, the tests left out of the baseline and
the tasks), ``source/`` (the clean library with its whole test suite) and, for a downloaded library,
``venv/`` (its test dependencies). A task is materialised as a copy of ``source/`` with the task's module
changed and the hidden tests removed; it is scored by the whole suite on a fresh copy, after the strategy.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import libcst as cst

from coderefine.bench.library import SUITE_TIMEOUT, TEST_TIMEOUT, copy_tree, run_suite
from coderefine.errors import UsageError
from coderefine.project.runner import Runner

SUITE_FILE = "suite.json"
FORMAT = 1
# Review tasks: a pull request rewriting a function, with a mutant inside ("review") or without
# ("review-clean", the negatives). They run through ``coderefine review``, not the fix loop.
REVIEW_KINDS = ("review", "review-clean")
# A release task (``make-suite --upgrade-to``): its project keeps only the visible failing tests; every
# other test of the new release (the held-back fail-to-pass ones and the whole pass-to-pass suite) is
# hidden, and scores.
RELEASE_KIND = "release"


@dataclass(frozen=True)
class Edit:
    """The clean text of a function and the text the task starts from (a mutant or a removed body)."""

    clean: str
    changed: str
    path: str = ""  # the file it is in, when not the task's own ``path`` (a release task's other files)


@dataclass(frozen=True)
class LibraryTask:
    task_id: str
    kind: str  # bug, feature, clean, review, review-clean
    shape: str  # single, multi, feature, clean; a review task's rewrites, e.g. "rename+extract"
    strength: str  # function, report, tests, feature, refactor
    mutation: str  # the operators, joined by "+"; "removed-body" or "none"
    path: str  # the module, relative to the library's root
    function: str
    line: int
    intent: str
    edits: tuple[Edit, ...]
    visible: tuple[str, ...]  # failing test node ids left in the task's project
    hidden: tuple[str, ...]  # failing test node ids removed from it (the whole suite scores anyway)
    module_lines: int = 0
    # A review task's head function as its author meant it: the rewrite without the mutant.
    intended: str = ""
    # Every file a release task changes, its ``path`` first; empty for a task of one file.
    files: tuple[str, ...] = ()
    suite: SuiteInfo | None = field(default=None, compare=False, repr=False)

    @property
    def bug_type(self) -> str:
        return self.mutation if self.kind == "bug" else self.kind

    def failing_visible(self, folder: Path, runner: Runner, environ: Mapping[str, str]) -> tuple[str, ...]:
        """The visible tests, which fail on the starting code by construction: the builder keeps a task's
        tests only when they notice its change (and checks that they do, twice)."""
        return self.visible

    @property
    def buggy_solution(self) -> str:
        """What the oracle looks for (the first changed function) — the name HumanEvalFix tasks use."""
        return self.edits[0].changed if self.edits else ""

    @property
    def python(self) -> str:
        return self._info().python

    @property
    def paths(self) -> tuple[str, ...]:
        return self.files or (self.path,)

    def oracle_edits(self) -> list[tuple[str, str]]:
        if self.kind in REVIEW_KINDS:
            # The pull request's rewrite is wanted: only the mutant inside it is a fault.
            return [(e.changed, self.intended) for e in self.edits if e.changed != self.intended]
        return [(e.changed, e.clean) for e in self.edits]

    def oracle_changes(self) -> list[tuple[str, str, str]]:
        """``oracle_edits`` with the file of each: (path, wrong, right)."""
        if self.kind in REVIEW_KINDS:
            return [(self.path, a, b) for a, b in self.oracle_edits()]
        return [(e.path or self.path, e.changed, e.clean) for e in self.edits]

    def mutated_lines(self, clean_module: str) -> frozenset[int]:
        """A review task's head lines that differ from the pull request its author meant (the mutant's
        lines; for a deleted line, the lines around it); empty for the negatives."""
        head = self.start_text(clean_module)
        if self.kind != "review" or not self.edits:
            return frozenset()
        meant = head.replace(self.edits[0].changed, self.intended)
        return frozenset(differing_lines(meant, head))

    def start_text(self, clean_module: str, path: str = "") -> str:
        """The text of ``path`` (default: the task's own file) that the task starts from."""
        text = clean_module
        for edit in self.edits:
            if (edit.path or self.path) != (path or self.path):
                continue
            if text.count(edit.clean) != 1:
                raise UsageError(f"{self.task_id}: the suite's source does not match its task records")
            text = text.replace(edit.clean, edit.changed)
        return text

    def clean_module(self, path: str = "") -> str:
        return (self._info().source / (path or self.path)).read_text("utf-8")

    def start_texts(self) -> dict[str, str]:
        """Every file the task changes, as the task starts."""
        return {p: self.start_text(self.clean_module(p), p) for p in self.paths}

    def materialise(self, folder: Path) -> Path:
        info = self._info()
        copy_tree(info.source, folder)
        for path, text in self.start_texts().items():
            (folder / path).write_text(text, "utf-8")
        remove_tests(folder, self.hidden_tests())
        for pattern in (p for p in info.deselect if "::" not in p):
            # A test file left out with ``--deselect`` (it cannot run here) is not the project's either.
            for found in folder.glob(pattern):
                if found.is_dir():
                    _rmtree(found)
                else:
                    found.unlink()
        marker = folder / "pyproject.toml"
        if not marker.exists():
            # coderefine finds a project's root by its pyproject.toml; an older library has none.
            marker.write_text("# the root of this benchmark task's project\n", "utf-8")
        return folder

    def hidden_tests(self) -> tuple[str, ...]:
        """The tests removed from the task's project: the held-back failing ones; for a release task, also
        every other test whose function no visible test shares: the pass-to-pass suite, and the tests the
        baseline left out (red on the new release: once the visible tests can be collected again, they
        would look like failures the candidate brought)."""
        if self.kind != RELEASE_KIND:
            return self.hidden
        shown = {test_function(n) for n in self.visible}
        info = self._info()
        # A deselected file or folder (no ``::``) is not collected at all: nothing to remove from it.
        skipped = (n for n in info.deselect if "::" in n)
        others = (n for n in (*info.passing, *skipped) if test_function(n) not in shown)
        return tuple(sorted({*self.hidden, *others}))

    def passes(
        self,
        module_text: str | Mapping[str, str],
        scratch: Path,
        runner: Runner,
        environ: Mapping[str, str],
        slack: float = 1,
    ) -> bool:
        """Whether the whole suite (hidden tests included) passes with ``module_text`` as the module (or,
        for a task of several files, with each file's text of the mapping); ``slack`` multiplies the run's
        and each test's time limit."""
        info = self._info()
        texts = {self.path: module_text} if isinstance(module_text, str) else dict(module_text)
        tree = copy_tree(info.source, scratch / "score")
        try:
            for path, text in texts.items():
                (tree / path).write_text(text, "utf-8")
            run = run_suite(
                info.python,
                tree,
                runner,
                environ,
                deselect=info.deselect,
                timeout=SUITE_TIMEOUT * slack,
                test_timeout=TEST_TIMEOUT * slack,
            )
        finally:
            _rmtree(tree)
        return run.finished and not run.failed() and bool(run.passed())

    def _info(self) -> SuiteInfo:
        if self.suite is None:
            raise UsageError(f"{self.task_id}: the task is not attached to a suite folder")
        return self.suite

    def record(self) -> dict[str, object]:
        data = asdict(self)
        data.pop("suite")
        return data


@dataclass(frozen=True)
class SuiteInfo:
    folder: Path
    name: str
    version: str
    python: str
    deselect: tuple[str, ...]
    passing: tuple[str, ...] = ()  # a release suite's baseline: every test green on the new release

    @property
    def source(self) -> Path:
        return self.folder / "source"


def differing_lines(before: str, after: str) -> tuple[int, ...]:
    """The 1-based lines of ``after`` that differ from ``before``; a deletion marks its neighbours."""
    old, new = before.splitlines(), after.splitlines()
    found: set[int] = set()
    for tag, _, _, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag in ("replace", "insert"):
            found.update(range(j1 + 1, j2 + 1))
        elif tag == "delete":
            found.update(n for n in (j1, j1 + 1) if 1 <= n <= len(new))
    return tuple(sorted(found))


def _rmtree(path: Path) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def write_suite(folder: Path, library: Mapping[str, object], tasks: Sequence[LibraryTask]) -> None:
    data = {"format": FORMAT, "library": dict(library), "tasks": [t.record() for t in tasks]}
    (folder / SUITE_FILE).write_text(json.dumps(data, indent=1) + "\n", "utf-8")


def load_suite(folder: Path) -> tuple[dict[str, object], list[LibraryTask]]:
    """The library record and the tasks of a suite folder, each task attached to it."""
    folder = folder.absolute()
    path = folder / SUITE_FILE
    try:
        data = json.loads(path.read_text("utf-8"))
        library = data["library"]
        python = str(library["python"])
        if not os.path.isabs(python):
            python = str(folder / python)
        info = SuiteInfo(
            folder,
            str(library["name"]),
            str(library["version"]),
            python,
            tuple(library["deselect"]),
            tuple(library.get("passing", ())),
        )
        tasks = []
        for row in data["tasks"]:
            row = dict(row)
            row["edits"] = tuple(Edit(**e) for e in row["edits"])
            row["visible"], row["hidden"] = tuple(row["visible"]), tuple(row["hidden"])
            row["files"] = tuple(row.get("files", ()))
            tasks.append(LibraryTask(**row, suite=info))
    except (OSError, KeyError, TypeError, ValueError) as exc:
        raise UsageError(
            f"{folder} is not a usable suite ({exc}); build it with 'coderefine bench make-suite'"
        ) from exc
    if data.get("format") != FORMAT:
        raise UsageError(f"{folder} was built by another version of coderefine; build it again")
    return dict(library), tasks


def test_function(nodeid: str) -> str:
    """``tests/test_x.py::TestA::test_b[1-2]`` -> ``tests/test_x.py::TestA::test_b``."""
    return nodeid.split("[", 1)[0]


def remove_tests(root: Path, nodeids: Sequence[str]) -> None:
    """Delete the test functions of ``nodeids`` (whole functions, every parameter set) from their files."""
    by_file: dict[str, set[str]] = {}
    for nodeid in nodeids:
        path, _, rest = test_function(nodeid).partition("::")
        by_file.setdefault(path, set()).add(rest)
    for path, names in by_file.items():
        file = root / path
        module = cst.parse_module(file.read_text("utf-8"))
        file.write_text(module.visit(_TestRemover(names)).code, "utf-8")


class _TestRemover(cst.CSTTransformer):
    def __init__(self, names: set[str]) -> None:
        self.names = names
        self.scope: list[str] = []

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.scope.append(node.name.value)

    def leave_ClassDef(
        self, original_node: cst.ClassDef, updated_node: cst.ClassDef
    ) -> cst.ClassDef | cst.RemovalSentinel:
        self.scope.pop()
        body = updated_node.body
        if isinstance(body, cst.IndentedBlock) and not body.body:
            # A class whose every test is hidden still has to parse.
            return updated_node.with_changes(
                body=body.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])])
            )
        return updated_node

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.scope.append(node.name.value)
        return False

    def leave_FunctionDef(
        self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef
    ) -> cst.FunctionDef | cst.RemovalSentinel:
        name = "::".join(self.scope)
        self.scope.pop()
        return cst.RemovalSentinel.REMOVE if name in self.names else updated_node
