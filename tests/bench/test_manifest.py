"""The shipped manifest, and the self-checks on a shipped suite built from it (downloads in CI)."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from coderefine.bench.harness import run_bench
from coderefine.bench.manifest import Library, differences, library_suite, load_manifest, record
from coderefine.bench.models import DoNothingModel, OracleModel
from coderefine.bench.strategies import strategies
from coderefine.bench.suite import SUITE_FILE, LibraryTask
from coderefine.bench.summary import summary
from coderefine.config import Settings
from coderefine.project.runner import SubprocessRunner

CACHE = Path(os.environ.get("CODEREFINE_BENCH_CACHE", Path(__file__).parents[2] / ".bench-cache"))
# The smallest shipped library: it builds in about two minutes on two cores. The other libraries'
# self-checks are `coderefine bench --model oracle` and `--model do-nothing` (see docs/benchmarks.md).
CI_LIBRARY = "inflection"
# The release suite that builds fastest (two small source distributions, a suite of seconds).
CI_RELEASE = "python-slugify==9.1.3 -> 9.2.0"


def test_the_manifest_pins_libraries_and_holds_no_code() -> None:
    libraries = load_manifest()
    assert len(libraries) >= 2
    fields = {
        "task_id",
        "kind",
        "shape",
        "strength",
        "mutation",
        "path",
        "function",
        "line",
        "visible",
        "hidden",
    }
    for library in libraries:
        assert library.licence and library.version
        assert all("==" in requirement for requirement in library.requires), library.requires
        assert len(library.records) >= (1 if library.upgrade_to else 15)
        for row in library.records:
            # A release task of several files lists them.
            assert set(row) - {"files"} == fields and ("files" not in row or len(row["files"]) > 1)  # type: ignore[arg-type]
    kinds = {str(row["kind"]) for library in libraries for row in library.records}
    assert kinds == {"bug", "feature", "feature-tests", "clean", "review", "review-clean", "release"}
    assert sum(len(library.records) for library in libraries) >= 190


def test_the_manifest_ships_80_release_tasks_over_ten_libraries_most_of_them_recent() -> None:
    releases = [library for library in load_manifest() if library.upgrade_to]
    tasks = [row for library in releases for row in library.records]
    assert len(tasks) >= 80 and len({library.name for library in releases}) >= 10
    # Newer than a model's training: most come from releases after 2026-06-01 (the day NEW reached PyPI).
    assert all(len(library.released) == 10 for library in releases)
    recent = [row for library in releases if library.released > "2026-06-01" for row in library.records]
    assert len(recent) >= 60
    assert all(row["kind"] == "release" for row in tasks)
    assert len({library.folder_name for library in releases}) == len(releases)
    # Task ids are unique across the shipped suites, so results of one run never mix two tasks.
    every = [str(row["task_id"]) for library in load_manifest() for row in library.records]
    assert len(every) == len(set(every))


@pytest.mark.slow
def test_self_checks_on_a_shipped_suite() -> None:
    """Oracle 100%, do-nothing 0% (and no change) on every task of the inflection suite; on its review
    tasks, the oracle catches every mutant with a verified fix that fixes it and raises no false alarm,
    and do-nothing catches nothing."""
    library = next(lib for lib in load_manifest() if lib.name == CI_LIBRARY)
    if not (CACHE / "suites" / library.folder_name / SUITE_FILE).exists() and not os.environ.get("CI"):
        pytest.skip(f"{library.requirement} is not built in {CACHE}; run with CI=1 to download and build it")
    runner = SubprocessRunner()
    tasks, differing = library_suite(library, CACHE / "suites", runner, os.environ, print)
    assert differing == differences(library, tasks)
    env = {"PATH": os.environ["PATH"]}
    chosen = strategies("coderefine,review")
    results = run_bench(
        tasks, chosen, lambda t, s: OracleModel(t), Settings(), runner, env, cache_dir=None, jobs=2
    )
    table = summary(results)
    row = table["coderefine"]
    assert row["fix_rate"] == 1.0, [r.task_id for r in results if not r.fixed]
    assert row["errors"] == 0 and table["review"]["errors"] == 0
    review = table["review"]["review"]
    assert review["tasks"] >= 1 and review["caught"] == review["verified_fixing"] == review["tasks"]
    assert review["false_alarms"] == 0
    nothing = DoNothingModel()
    results = run_bench(tasks, chosen, lambda t, s: nothing, Settings(), runner, env, cache_dir=None, jobs=2)
    table = summary(results)
    assert table["coderefine"]["fixed"] == 0 and table["review"]["fixed"] == 0
    assert table["review"]["review"]["false_alarms"] == table["review"]["review"]["verified"] == 0
    assert not any(r.changed for r in results)


@pytest.mark.slow
def test_self_checks_on_a_shipped_release_suite() -> None:
    """Oracle 100% and do-nothing 0% (no change) on every task of the smallest shipped release suite:
    two source distributions downloaded, the new tests run on the old code, the tasks scored."""
    library = next(lib for lib in load_manifest() if lib.label == CI_RELEASE)
    if not (CACHE / "suites" / library.folder_name / SUITE_FILE).exists() and not os.environ.get("CI"):
        pytest.skip(f"{library.label} is not built in {CACHE}; run with CI=1 to download and build it")
    runner = SubprocessRunner()
    tasks, differing = library_suite(library, CACHE / "suites", runner, os.environ, print)
    assert differing == differences(library, tasks) and tasks and {t.kind for t in tasks} == {"release"}
    env = {"PATH": os.environ["PATH"]}
    oracle = run_bench(
        tasks,
        strategies("coderefine"),
        lambda t, s: OracleModel(t),
        Settings(),
        runner,
        env,
        cache_dir=None,
        jobs=2,
    )
    assert summary(oracle)["coderefine"]["fix_rate"] == 1.0, [r.task_id for r in oracle if not r.fixed]
    nothing = DoNothingModel()
    none = run_bench(
        tasks, strategies("one-shot"), lambda t, s: nothing, Settings(), runner, env, cache_dir=None, jobs=2
    )
    assert summary(none)["one-shot"]["fixed"] == 0 and not any(r.changed for r in none)


def test_built_tasks_of_a_kind_the_records_predate_are_additions_not_differences() -> None:
    def task(task_id: str, kind: str, line: int = 3) -> LibraryTask:
        return LibraryTask(
            task_id, kind, "single", "function", "constant", "m.py", "f", line, "i", (), (), ()
        )

    bug, review = task("lib/000", "bug"), task("lib/review-000", "review")
    library = Library("lib", "1", "MIT", (), 8, 0, "", (record(bug),))
    assert differences(library, [bug, review]) == []
    assert differences(library, [task("lib/000", "bug", line=4), review]) == ["lib/000"]
    with_reviews = replace(library, records=(record(bug), record(review)))
    assert differences(with_reviews, [bug]) == ["lib/review-000"]
