"""``coderefine bench make-suite``: a suite folder from a real library, built reproducibly.

The library comes from its source distribution (``NAME==VERSION``, with pip) or from a local checkout
(``--from``). Its tests run twice on the clean code: a test that fails or flakes is left out. Mutants and
removed bodies are kept only when the suite notices them; everything is built in a temporary folder beside
the target and renamed into place at the end, so a half-built suite is never seen.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from coderefine.bench.advice import (
    has_tests,
    left_out_summary,
    next_changed,
    no_source_change,
    no_tests,
    not_green,
    plugins_left_out,
)
from coderefine.bench.builder import Builder, Progress, library_modules
from coderefine.bench.contain import end_marked, marked
from coderefine.bench.counts import by_kind, plural, shapes, shortfall_message
from coderefine.bench.declared import NOTHING, Declared, declared
from coderefine.bench.disguise import disguise_tree
from coderefine.bench.library import (
    SuiteRun,
    copy_tree,
    covered_lines,
    download_sdist,
    make_venv,
    run_suite,
    unpack,
)
from coderefine.bench.pytest_config import pin_pytest_root
from coderefine.bench.release import changed_modules, release_tasks
from coderefine.bench.suite import LibraryTask, SuiteInfo, write_suite
from coderefine.errors import UsageError
from coderefine.project.runner import Runner
from coderefine.signals.warm import WarmPytest, top_level_names

__all__ = ["Progress", "Source", "make_suite"]

TEMP = "tmp"  # the build's temporary folder, removed before the suite is renamed into place
LOOK_AHEAD = 3  # later releases downloaded to find a pair that changes the code


@dataclass(frozen=True)
class Source:
    """Where a suite's library comes from: ``requirement`` (NAME==VERSION) or a local ``path``."""

    requirement: str = ""
    path: Path | None = None
    requires: tuple[str, ...] = ("pytest",)
    licence: str = ""
    disguise: bool = False  # rename private names and locals, reorder definitions (``--disguise``)
    upgrade_to: str = ""  # a release suite: the changes from ``requirement``'s version to this one
    old_path: Path | None = None  # a release suite from two checkouts: ``path`` is the new release
    # Tests left out from the start (``--deselect``): node id prefixes, or files and folders (globs).
    deselect: tuple[str, ...] = ()
    # The later releases of ``requirement``'s library, oldest first: where to look for a pair that
    # changes the code when this one does not (``make-suite NAME==OLD --upgrade-to NEW`` asks PyPI).
    later: Callable[[], Sequence[str]] = field(default=lambda: (), compare=False)

    @property
    def label(self) -> str:
        if self.upgrade_to:
            return f"{self.requirement or self.old_path} -> {self.upgrade_to}"
        return self.requirement or str(self.path)


def make_suite(
    source: Source,
    out: Path,
    runner: Runner,
    environ: Mapping[str, str],
    *,
    tasks: int = 60,
    seed: int = 0,
    progress: Progress = lambda message: None,
) -> list[LibraryTask]:
    """Build the suite folder ``out``; returns its tasks. ``out`` must not exist yet."""
    out = out.absolute()
    if out.exists():
        raise UsageError(f"{out} exists; remove it or choose another -o")
    out.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".{out.name}.building-", dir=out.parent))
    # What the library's tests write to a temporary folder stays in the build's, and goes with it; what
    # they start is ended with the build, even a process that left their process group.
    env = marked(environ, building / TEMP)
    try:
        built = _build(source, building, runner, env, tasks, seed, progress)
        end_marked(env)
        shutil.rmtree(building / TEMP, ignore_errors=True)
        building.rename(out)
    except BaseException:
        end_marked(env)
        shutil.rmtree(building, ignore_errors=True)
        raise
    return built


def _build(
    source: Source,
    folder: Path,
    runner: Runner,
    environ: Mapping[str, str],
    count: int,
    seed: int,
    progress: Progress,
) -> list[LibraryTask]:
    label = source.label
    if source.path is not None:
        if not source.path.is_dir():
            raise UsageError(f"--from {source.path}: not a folder")
        if source.upgrade_to and source.old_path is None:
            raise UsageError("--upgrade-to needs NAME==VERSION (two releases from the index), not --from")
        progress(f"{label}: copying the checkout")
        tree = copy_tree(source.path, folder / "source")
        shutil.rmtree(tree / ".git", ignore_errors=True)
        if source.old_path is not None:
            copy_tree(source.old_path, folder / "old")
        own = source.path / ".venv" / "bin" / "python"
        python = str(own.resolve()) if own.exists() else sys.executable
        stored_python = python
        # A checkout runs with its own environment: what it declares only names the packages in advice.
        needs = declared(tree)
        name, version = source.path.resolve().name, "local"
    else:
        name, _, version = source.requirement.partition("==")
        if not name or not version:
            raise UsageError(f"{source.requirement!r}: give NAME==VERSION (a pinned version)")
        progress(f"{label}: downloading the source distribution")
        # A release suite's source is the new release; the old one is kept beside it while building.
        wanted = f"{name}=={source.upgrade_to}" if source.upgrade_to else source.requirement
        tree = _fetch(wanted, folder, "source", runner, label)
        if source.upgrade_to:
            _fetch(source.requirement, folder, "old", runner, label)
        if not has_tests(tree):  # said before a minute of installing what it needs
            raise UsageError(no_tests(label))
        needs = declared(tree, name)
        if needs.requirements():
            given = ", ".join(source.requires)
            progress(f"{label}: installing {needs.describe()}, then --requires ({given})")
        else:
            progress(f"{label}: installing its test dependencies ({', '.join(source.requires)})")
        python = make_venv(
            folder / "venv", source.requires, runner, label, needs.runtime, needs.test, progress
        )
        stored_python = str(Path(python).relative_to(folder))
    pin_pytest_root(tree)
    if not has_tests(tree):
        raise UsageError(no_tests(label))
    disguised: dict[str, int] = {}
    if source.disguise:
        progress(f"{label}: disguising it (private names, locals, the order of definitions)")
        done = disguise_tree(tree, library_modules(tree, label), seed)
        disguised = {"renamed": done.renamed, "locals_renamed": done.locals_renamed, "moved": done.moved}
        progress(f"{label}: disguised ({', '.join(f'{k} {v}' for k, v in disguised.items())})")
        label = f"{label} (disguised)"
    progress(f"{label}: running its tests twice for the baseline")
    deselect, runs = _baseline(python, tree, runner, environ, label, source.deselect, needs)
    baseline = runs[-1]
    failing = deselect[len(source.deselect) :]
    progress(left_out_summary(label, runs, failing, source.deselect, needs, tree))
    if plugins := plugins_left_out(label, baseline, deselect):
        progress(plugins)
    progress(f"{label}: finding the lines each test runs")
    coverage = covered_lines(python, tree, runner, environ, deselect)
    # Every candidate's run forks from one process that has imported pytest: on a suite that runs in a
    # second, the interpreter's start and pytest's import were most of each run.
    warm = WarmPytest(python, environ, top_level_names(_python_files(tree))) if hasattr(os, "fork") else None
    extra: dict[str, object] = {}
    try:
        rng = random.Random(seed)
        builder = Builder(label, tree, python, runner, environ, deselect, rng, progress, coverage, warm)
        if source.upgrade_to:
            changed = changed_modules(folder / "old", tree, builder.modules())
            if not changed:
                later = _later_change(source, name, tree, builder.modules(), folder, runner, label)
                raise UsageError(no_source_change(label, name, source.upgrade_to, later))
            built = release_tasks(builder, name, source.upgrade_to, changed, baseline, count)
            found = built.tasks
            extra = {
                "upgrade_to": source.upgrade_to,
                "changed_files": built.changed_files,
                "fail_to_pass": built.fail_to_pass,
                "pass_to_pass": built.pass_to_pass,
                # A release task's project keeps only its visible tests: the others are these, less them.
                "passing": sorted(baseline.passed()),
            }
            shutil.rmtree(folder / "old")
            if not found:
                raise UsageError(f"{label}: {built.reason()}")
        else:
            found = builder.tasks(name, count)
            made = sum(1 for task in found if task.kind in ("bug", "feature"))
            if short := shortfall_message(label, count, made, builder.shortfalls):
                progress(short)
    finally:
        if warm is not None:
            warm.close()
    info = SuiteInfo(folder, name, version, python, deselect)
    found, left_out = scorable(found, info, runner, environ)
    if left_out:
        verb = "fails" if len(left_out) == 1 else "fail"
        progress(
            f"{label}: {plural(len(left_out), 'task')} left out: correct code that {verb} the scoring run"
        )
    library = {
        "name": name,
        "version": version,
        "licence": source.licence,
        "requires": list(source.requires),
        "declared": list(needs.requirements()) if source.path is None else [],
        "python": stored_python,
        "deselect": list(deselect),
        "deselect_given": list(source.deselect),
        "seed": seed,
        "requested": count,
        "tests": len(baseline.passed()),
        "disguise": disguised,
        **extra,
        "left_out": left_out,
    }
    write_suite(folder, library, found)
    progress(f"{label}: {by_kind(found)}")
    if shaped := shapes(found):
        progress(f"{label}: shapes: {shaped}")
    return found


def scorable(
    tasks: Sequence[LibraryTask], info: SuiteInfo, runner: Runner, environ: Mapping[str, str]
) -> tuple[list[LibraryTask], list[str]]:
    """The tasks whose correct code (what the oracle writes: the clean module, or a review's rewrite
    without its mutant) passes the scoring run itself, as ``bench`` will run it; and the ids of the
    others, left out. Candidates were checked with the tests that run their lines and a short limit, so
    this is the one check under the scoring run's own conditions. Each distinct text runs once."""
    verdicts: dict[str, bool] = {}
    kept: list[LibraryTask] = []
    left_out: list[str] = []
    with tempfile.TemporaryDirectory(prefix="coderefine-scorable-") as scratch:
        for task in tasks:
            attached = replace(task, suite=info)
            clean = attached.clean_module()
            text = clean.replace(task.edits[0].clean, task.intended, 1) if task.intended else clean
            key = hashlib.sha256(f"{task.path}\0{text}".encode()).hexdigest()
            if key not in verdicts:
                verdicts[key] = attached.passes(text, Path(scratch), runner, environ)
            if verdicts[key]:
                kept.append(task)
            else:
                left_out.append(task.task_id)
    return kept, left_out


def _fetch(requirement: str, folder: Path, into: str, runner: Runner, label: str) -> Path:
    """``requirement``'s source distribution unpacked as ``folder/into``."""
    downloads = folder / f"download-{into}"
    downloads.mkdir()
    archive = download_sdist(requirement, downloads, runner)
    tree = unpack(archive, folder / f"unpacked-{into}", label).rename(folder / into)
    shutil.rmtree(downloads)
    shutil.rmtree(folder / f"unpacked-{into}")
    return tree


def _python_files(tree: Path) -> list[str]:
    return [path.relative_to(tree).as_posix() for path in tree.rglob("*.py")]


def _baseline(
    python: str,
    tree: Path,
    runner: Runner,
    environ: Mapping[str, str],
    label: str,
    skip: Sequence[str] = (),
    needs: Declared = NOTHING,
) -> tuple[tuple[str, ...], tuple[SuiteRun, SuiteRun]]:
    """The tests left out (``skip``, and those that failed or flaked) and the two clean runs."""
    first = run_suite(python, tree, runner, environ, deselect=skip)
    second = run_suite(python, tree, runner, environ, deselect=skip)
    if not (first.finished and second.finished) or not (first.passed() & second.passed()):
        message = not_green(label, [first, second], needs)
        if "disguised" in label:
            message += "; the disguise may have broken it: build without --disguise"
        raise UsageError(message)
    good = first.passed() & second.passed()
    seen = {o.nodeid for o in first.outcomes + second.outcomes if o.outcome != "skipped"}
    return (*skip, *sorted(seen - good - set(skip))), (first, second)


def _later_change(
    source: Source,
    name: str,
    tree: Path,
    modules: Sequence[str],
    folder: Path,
    runner: Runner,
    label: str,
) -> tuple[str, str] | None:
    """The next pair after this one that changes a library module: (NEW, the first later release that
    differs from it), looked for among the next few releases; None when there is none or no index."""
    try:
        versions = list(source.later())[:LOOK_AHEAD]
    except UsageError:
        return None

    def fetch(version: str) -> Path | None:
        try:
            return _fetch(f"{name}=={version}", folder, f"later-{version}", runner, label)
        except UsageError:
            return None

    found = next_changed(modules, tree, versions, fetch)
    return (source.upgrade_to, found) if found else None
