"""Sweeps end to end: real git, ruff and pytest in temporary repositories, a model that answers per file."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from coderefine.cli.commands.sweep import sweep_cache
from coderefine.config import Settings
from coderefine.doors.sweep.costs import prior_cost
from coderefine.doors.sweep.records import FileOutcome, SweepResult
from coderefine.doors.sweep.run import Snapshot, Sweep
from coderefine.errors import EXIT_INTERRUPTED, OverloadedError
from coderefine.models.base import ModelReply, ModelRequest, Usage
from coderefine.project.cache import ReviewCache
from coderefine.project.gitio import GitRepo
from coderefine.project.runner import SubprocessRunner
from coderefine.project.writes import Journal
from tests.conftest import RepoFactory
from tests.refiner.test_loop import BUGGY, PASS, edit

FIXED = BUGGY.replace("a - b", "a + b")
CLEAN = "def add(a, b):\n    return a + b\n"
MODULES = ("pkg/a.py", "pkg/b.py", "pkg/c.py", "pkg/d.py")
PROJECT: dict[str, str | bytes] = {
    "pkg/__init__.py": "",
    "pkg/a.py": BUGGY,
    "pkg/b.py": BUGGY,
    "pkg/c.py": BUGGY,
    "pkg/d.py": CLEAN,
}
USAGE = Usage(4_000, 1_000)  # per call: more than a first guess of a small file's call
PRICED = "claude-sonnet-5-5"  # replies name a priced model, so the sweep has a cost to budget


def critique_of(path: str) -> dict[str, object]:
    issue = {
        "title": "add subtracts",
        "severity": "error",
        "path": path,
        "line": 2,
        "end_line": 2,
        "evidence": "return a - b",
        "suggestion": "use +",
    }
    return {"verdict": "revise", "summary": "add subtracts", "issues": [issue]}


class PerFileModel:
    """Answers each file's calls from its own text: a critique while the bug is there, then the fix, then a
    pass. Safe to call from several threads; counts the calls per file."""

    def __init__(
        self,
        *,
        fail: Iterable[str] = (),
        before_call: Callable[[str, int], None] | None = None,
    ) -> None:
        self.fail = set(fail)
        self.before_call = before_call
        self.calls: Counter[str] = Counter()
        self.revised: set[str] = set()
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return "scripted"

    def complete(self, request: ModelRequest) -> ModelReply:
        text = request.prompt_text()
        path = next(p for p in MODULES if p in text)
        with self._lock:
            self.calls[path] += 1
            total = sum(self.calls.values())
        if self.before_call is not None:
            self.before_call(path, total)
        if path in self.fail:
            raise OverloadedError("the model API is overloaded (529) after the retries; try again later")
        if request.role == "reviser":
            self.revised.add(path)
            return ModelReply(edit("    return a - b\n", "    return a + b\n", path), USAGE, PRICED)
        buggy = "return a - b" in text and path not in self.revised
        return ModelReply("", USAGE, PRICED, tool_input=critique_of(path) if buggy else PASS)


class Recorder:
    def __init__(self) -> None:
        self.snapshots: list[Snapshot] = []
        self.finished: list[FileOutcome] = []

    def update(self, snapshot: Snapshot, finished: FileOutcome | None) -> None:
        self.snapshots.append(snapshot)
        if finished is not None:
            self.finished.append(finished)


def sweep(
    root: Path,
    model: PerFileModel,
    settings: Settings | None = None,
    files: tuple[str, ...] = MODULES,
    **kwargs: object,
) -> SweepResult:
    repo = GitRepo.find(root)
    settings = settings or Settings(tests=False)
    cache = sweep_cache(root, repo, len(files), settings.cache_max_entries)
    runner = Sweep(
        root,
        repo,
        settings,
        model,
        runner=SubprocessRunner(),
        environ={"PATH": "/usr/bin:/bin"},
        cache=cache,
        intent="add must add",
        **kwargs,  # type: ignore[arg-type]
    )
    return runner.run(files)


def by_path(result: SweepResult) -> dict[str, FileOutcome]:
    return {o.path: o for o in result.outcomes}


def test_a_failing_file_stops_nothing_and_one_undo_restores_the_sweep(make_repo: RepoFactory) -> None:
    root = make_repo(
        {
            **PROJECT,
            "tests/test_d.py": "from pkg.d import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
        }
    )
    recorder = Recorder()
    result = sweep(root, PerFileModel(fail={"pkg/c.py"}), Settings(), jobs=2, listener=recorder)
    outcomes = by_path(result)
    assert [outcomes[p].status for p in MODULES] == ["fixed", "fixed", "failed", "unchanged"]
    assert outcomes["pkg/c.py"].exit_code == 4 and "overloaded" in outcomes["pkg/c.py"].detail
    assert result.exit_code == 4  # the worst of the files
    assert result.written == ("pkg/a.py", "pkg/b.py") and result.cost > 0
    assert (root / "pkg/a.py").read_text() == FIXED and (root / "pkg/c.py").read_text() == BUGGY
    last = recorder.snapshots[-1]
    assert (last.done, last.total, last.counts["fixed"], last.counts["failed"]) == (4, 4, 2, 1)
    assert sorted(o.path for o in recorder.finished) == list(MODULES)

    repo = GitRepo.find(root)
    assert repo is not None
    undone = Journal.for_project(root, repo.git_dir).undo()
    assert sorted(undone.restored) == ["pkg/a.py", "pkg/b.py"] and undone.entry == result.journal_entry
    assert all((root / p).read_text() == BUGGY for p in ("pkg/a.py", "pkg/b.py"))


def test_files_run_concurrently_with_jobs(make_repo: RepoFactory) -> None:
    root = make_repo(PROJECT)
    both = threading.Barrier(2, timeout=60)

    def meet(path: str, total: int) -> None:
        # The first calls of a.py and b.py wait for each other: only two workers get past this.
        if path in ("pkg/a.py", "pkg/b.py") and total <= 2:
            both.wait()

    result = sweep(root, PerFileModel(before_call=meet), files=("pkg/a.py", "pkg/b.py"), jobs=2)
    assert [o.status for o in result.outcomes] == ["fixed", "fixed"]


def test_the_budget_stops_starting_new_files(make_repo: RepoFactory) -> None:
    root = make_repo(PROJECT)
    settings = Settings(tests=False)
    from coderefine.models.prices import cost_of

    per_file = 3 * cost_of(PRICED, USAGE)
    assert prior_cost(len(BUGGY), settings) < per_file  # so the first file starts within the budget
    budget = per_file * 1.5
    result = sweep(root, PerFileModel(), settings, jobs=1, budget=budget)
    outcomes = by_path(result)
    assert outcomes["pkg/a.py"].status == "fixed"
    assert [(outcomes[p].status, outcomes[p].detail) for p in MODULES[1:]] == [("skipped", "budget")] * 3
    assert result.cost <= budget and result.exit_code == 1
    from coderefine.doors.sweep.report import render_sweep

    assert "skipped: budget: pkg/b.py, pkg/c.py, pkg/d.py" in render_sweep(result, "coderefine fix pkg")


def test_an_interrupted_sweep_resumes_where_it_stopped(make_repo: RepoFactory) -> None:
    root = make_repo(PROJECT)

    def interrupt(path: str, total: int) -> None:
        if total == 4:  # a.py took three calls; Ctrl-C during b.py's first
            raise KeyboardInterrupt

    first = sweep(root, PerFileModel(before_call=interrupt), jobs=1)
    outcomes = by_path(first)
    assert first.interrupted and first.exit_code == EXIT_INTERRUPTED
    assert outcomes["pkg/a.py"].status == "fixed" and (root / "pkg/a.py").read_text() == FIXED
    assert [outcomes[p].detail for p in MODULES[1:]] == ["interrupted"] * 3
    assert (root / "pkg/b.py").read_text() == BUGGY  # never half-written: untouched

    model = PerFileModel()
    second = sweep(root, model, jobs=1)
    assert "pkg/a.py" not in model.calls  # finished before the interruption: not run again
    assert by_path(second)["pkg/a.py"].cached and second.exit_code == 0
    assert [o.status for o in second.outcomes] == ["fixed", "fixed", "fixed", "unchanged"]
    third = sweep(root, PerFileModel(fail=MODULES), jobs=2)  # everything is done: no call at all
    assert all(o.cached for o in third.outcomes) and third.exit_code == 0


def test_a_dry_run_writes_nothing_and_shows_the_patches(make_repo: RepoFactory) -> None:
    root = make_repo(PROJECT)
    result = sweep(root, PerFileModel(), files=("pkg/a.py", "pkg/d.py"), write=False)
    assert [o.status for o in result.outcomes] == ["fixed", "unchanged"]
    assert not result.written and result.journal_entry == "" and (root / "pkg/a.py").read_text() == BUGGY
    assert "+    return a + b" in result.outcomes[0].diff


def test_the_sweep_cache_holds_a_whole_sweep(tmp_path: Path) -> None:
    cache = sweep_cache(tmp_path, None, 5_000, 2_000)
    assert isinstance(cache, ReviewCache) and cache.max_entries == 10_100
    assert cache.folder == tmp_path / ".coderefine" / "sweep"


def test_a_sweep_reads_the_projects_imports_once_for_all_its_files(
    make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each file's related tests come from one reading of the import index, not one per file (a stat of
    every test file of the project, each time); every file is still fixed with its tests run."""
    from coderefine.signals.import_index import ImportIndex

    tests = {
        f"tests/test_{m}.py": f"from pkg.{m} import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
        for m in "abcd"
    }
    root = make_repo({**PROJECT, **tests})
    readings = []
    real = ImportIndex.imports

    def counted(self: ImportIndex, *args: object, **kwargs: object) -> dict[str, set[str]]:
        readings.append(1)
        return real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ImportIndex, "imports", counted)
    result = sweep(root, PerFileModel(), Settings(), jobs=2)
    assert [o.status for o in result.outcomes] == ["fixed", "fixed", "fixed", "unchanged"]
    assert len(readings) == 1


def test_a_sweep_holds_its_test_trees_from_one_file_to_the_next(
    make_repo: RepoFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The files take turns in the same persistent copies: each copy is read in (its manifest and a
    stat of the project) once per sweep, not once per file, and every file is still fixed with its own
    tests, none of them seeing what the file before it wrote."""
    from coderefine.project.slot import Slot

    tests = {
        f"tests/test_{m}.py": f"from pkg.{m} import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
        for m in "abcd"
    }
    root = make_repo({**PROJECT, **tests})
    loads = []
    real = Slot._load

    def counted(self: Slot) -> object:
        loads.append(self.path)
        return real(self)

    monkeypatch.setattr(Slot, "_load", counted)
    repo = GitRepo.find(root)
    settings = Settings()
    environ = {"PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": str(tmp_path / "cache")}
    result = Sweep(
        root,
        repo,
        settings,
        PerFileModel(),
        runner=SubprocessRunner(),
        environ=environ,
        cache=sweep_cache(root, repo, 4, settings.cache_max_entries),
        intent="add must add",
        jobs=1,
    ).run(MODULES)
    assert [o.status for o in result.outcomes] == ["fixed", "fixed", "fixed", "unchanged"]
    assert len(loads) == len(set(loads)) <= 2  # the candidate's copy and the baseline's, each once
    assert all(Path(p).exists() for p in loads)
    for module in MODULES:
        assert "a + b" in (root / module).read_text()
