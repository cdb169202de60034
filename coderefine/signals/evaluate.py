"""Collect the signals of a version of the files under review, and compare them with the baseline.

ruff reads the text through stdin, so it needs no copy of the project. pytest runs in an isolated
copy (``workspace.IsolatedTree``), one for the baseline and one for candidates, made on first use.
ruff, pytest and the syntax check run concurrently: the first two are subprocesses.

The syntax signal is compile()'s verdict alone. libcst's parse guards writes, and every candidate passes
it at the gate (``gate.run_gate``) before it is evaluated; as a signal it would only repeat the gate's
verdict for candidates, report valid Python that libcst's grammar lags behind as an error, and put
libcst's import (a quarter of a second of the GIL) on the path of ``check`` and the hook.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Protocol

from coderefine.config import Settings
from coderefine.project.basetree import Slots, TreeCache, tree_cache_folder
from coderefine.project.change import Change
from coderefine.project.runner import Runner
from coderefine.signals.base import (
    CallRecord,
    Comparison,
    Signal,
    SignalSet,
    SourceStatus,
    compare,
    format_work,
    line_edits,
)
from coderefine.signals.lint_debt import old_lint
from coderefine.signals.pytest import PytestConfig, PytestSignals, find_interpreter
from coderefine.signals.related import TestSelection, select_tests
from coderefine.signals.ruff import RuffSignals
from coderefine.signals.snapshot import ProjectSnapshot, index_of
from coderefine.signals.syntax import check_compile
from coderefine.signals.trees import TestTrees
from coderefine.signals.warm import WarmPytest, top_level_names

_FILE_SOURCES = ("ruff", "format", "syntax")


@dataclass(frozen=True)
class Evaluation:
    """The signals of one version of the code, and what it introduced against the baseline."""

    signals: SignalSet
    comparison: Comparison


def compare_change(
    change: Change, baseline: SignalSet, current: SignalSet, texts: Mapping[str, str] | None = None
) -> Comparison:
    """What ``current`` introduced: file signals against the same file's baseline when it was
    modified (everything counts in a whole or new file); test failures against the baseline run
    when any file was modified (every failure counts in a whole-file review). Format work counts
    only on the lines of ``texts`` (the version measured) that differ from the baseline, and a ruff
    diagnostic of the baseline on a line the change rewrote or moved is not counted again."""
    modified = {f.path for f in change.files if f.kind == "modified"}

    def select(signals: SignalSet, keep: bool) -> SignalSet:
        chosen = tuple(
            s
            for s in signals.signals
            if (s.path in modified if s.source in _FILE_SOURCES else bool(modified)) == keep
        )
        return SignalSet(chosen, signals.statuses)

    compared = compare(select(baseline, True), select(current, True))
    if texts is not None:
        pairs = {
            f.path: (f.before.text, texts.get(f.path, f.after.text))
            for f in change.files
            if f.kind == "modified" and f.before is not None
        }
        edits = {path: line_edits(*pair) for path, pair in pairs.items()}
        # Old lint on a line the change edited or moved stays old (signals/lint_debt.py).
        compared = old_lint(format_work(compared, edits), pairs, edits)
    fresh = select(current, False).signals
    return Comparison(
        introduced=tuple(sorted(compared.introduced + fresh, key=lambda s: (s.path, s.line))),
        existing=compared.existing,
        fixed=compared.fixed,
        statuses=current.statuses,
    )


class BaselineStore(Protocol):
    """The baseline's signals per test file, kept between runs (None: not there)."""

    def get(self, test_file: str) -> tuple[Signal, ...] | None: ...

    def put(self, test_file: str, signals: tuple[Signal, ...]) -> None: ...


# Files whose content in the test trees is given rather than read from the working tree (None: absent).
Pinned = Callable[[], Mapping[str, bytes | None]]


class Evaluator:
    """Evaluates versions of the files under review for one change. Use it as a context manager."""

    def __init__(
        self,
        change: Change,
        settings: Settings,
        runner: Runner,
        environ: Mapping[str, str],
        project_files: Sequence[str],
        populate_tree: Callable[[Path], None] | None = None,
        persistent: bool = True,
        pinned: Pinned | None = None,
        warm: WarmPytest | None = None,
        snapshot: ProjectSnapshot | None = None,
        baseline_store: BaselineStore | None = None,
    ) -> None:
        """``populate_tree`` fills an isolated tree instead of copying ``project_files`` from the
        working tree (for a staged change: the git index, so that tests see what will be committed).
        ``persistent`` keeps the copies between runs (``basetree.py``); a project that is itself
        temporary (a benchmark task's folder) gains nothing from that and passes False. ``pinned``, asked
        when each tree is made, gives files whose content in the trees is not the working tree's (None: not
        there): a sweep pins the files it already wrote to their old bytes, so every file's tests see the
        project as the sweep found it, while the trees stay persistent copies. ``warm`` is a warm server
        already started for this project (``signals.prestart``); the Evaluator owns it from now on.
        ``snapshot``: the project read once for a sweep's files, and the trees they share
        (``signals.snapshot``). ``baseline_store``: the baseline's test results kept between runs, by a
        key that names the baseline's tree (a review's base, ``doors/review/basecache.py``)."""
        self._change = change
        self._runner = runner
        self._pinned = pinned
        self._settings = settings
        self._files = list(project_files)
        self._snapshot = snapshot
        self._baseline_store = baseline_store
        self._ruff = RuffSignals(runner, settings.ruff_select, settings.ruff_format)
        python = find_interpreter(change.root, settings.python, environ)
        config = PytestConfig(python, settings.test_command, settings.test_timeout, settings.run_timeout)
        cache_folder = tree_cache_folder(environ) if persistent and settings.persistent_trees else None
        self._tree_cache: Slots | None = TreeCache(cache_folder) if cache_folder is not None else None
        if snapshot is not None and cache_folder is not None:
            self._tree_cache = snapshot.trees
        self._trees = TestTrees(
            change.root, self._files, self._tree_cache, populate_tree, sparse=snapshot is None
        )
        self._pool = ThreadPoolExecutor(max_workers=8)
        self._static_baseline: Future[SignalSet] | None = None
        self._baseline_tests: dict[str, tuple[Signal, ...]] = {}
        self.selection = self._select_tests() if settings.tests else TestSelection((), "none")
        self.tests = list(self.selection.files)
        self._speculative: tuple[tuple[str, ...], Future[SignalSet]] | None = None
        self._runs: dict[str, Future[SignalSet]] = {}
        self._inflight: dict[str, Future[SignalSet]] = {}  # per tree: the run that may still read it
        # The warm runner starts importing pytest now, while the trees are copied and the signals begin.
        self._warm = None
        if self.tests and settings.warm_tests and hasattr(os, "fork"):
            avoid = snapshot.top_names() if snapshot is not None else top_level_names(self._files)
            usable = (
                warm is not None and warm.python == python and warm.avoid is not None and warm.avoid >= avoid
            )
            self._warm = warm if usable else WarmPytest(python, environ, avoid)
        if warm is not None and warm is not self._warm:
            warm.close()
        self._pytest = PytestSignals(runner, config, environ, self._warm)

    def _select_tests(self) -> TestSelection:
        # The change's own texts: a package __init__.py under review may add or drop a re-export.
        texts = {f.path: f.after.text for f in self._change.files}
        if self._snapshot is not None:
            return self._snapshot.imports.select(
                self._change.paths, texts, run_all=self._settings.tests == "all"
            )
        files = self._files + [p for p in self._change.paths if p not in self._files]
        root = self._change.root
        imports = index_of(root, self._tree_cache).imports(root, files, texts)
        return select_tests(
            self._change.paths, files, {}, run_all=self._settings.tests == "all", imports=imports
        )

    def _modified(self) -> bool:
        return any(f.kind == "modified" for f in self._change.files)

    def baseline_texts(self) -> dict[str, str]:
        """The files under review before the change (new files are absent)."""
        return {f.path: (f.before or f.after).text for f in self._change.files if f.kind != "added"}

    def _baseline_data(self) -> dict[str, bytes]:
        return {f.path: (f.before or f.after).encode() for f in self._change.files if f.kind != "added"}

    def start_baseline(self, tests: bool = False) -> None:
        """Begin the baseline's file signals (ruff, syntax) in the background; idempotent and cheap.

        With ``tests``, also run the baseline's related tests now, alongside the first candidate's, rather
        than after it and only if it fails: on two cores this halves the wall of a change whose tests
        fail (the review of a branch), at the price of a run that a passing change did not need."""
        if self._static_baseline is None and self._modified():
            texts = self.baseline_texts()
            self._static_baseline = self._pool.submit(self._static, texts)
        if tests and self._modified() and self.tests and not self._speculative:
            todo = self._stored(self.tests)
            if todo:
                self._speculative = (tuple(todo), self._start_tests("baseline", self._baseline_data(), todo))

    def _stored(self, test_files: Sequence[str]) -> list[str]:
        """Of ``test_files``, those whose baseline results are neither known nor in the store (the ones
        to run); the stored ones become known."""
        todo = []
        for test_file in test_files:
            if test_file in self._baseline_tests:
                continue
            hit = self._baseline_store.get(test_file) if self._baseline_store is not None else None
            if hit is None:
                todo.append(test_file)
            else:
                self._baseline_tests[test_file] = hit
        return todo

    def _baseline_for(self, current: SignalSet) -> SignalSet:
        """The baseline signals that ``current`` must be compared with.

        Tests run on the baseline only for the test files that fail on the candidate: a test that
        passes now cannot be a newly failing one, so a clean candidate costs one pytest run, not two.
        """
        if not self._modified():
            return SignalSet()
        self.start_baseline()
        assert self._static_baseline is not None
        failing_files = sorted({_test_file(s) for s in current.signals if s.source == "pytest"})
        if self._speculative:
            ran, future = self._speculative
            self._speculative = None
            result = future.result()
            # A run that timed out or could not start is not trusted; the failing files run again.
            if all(s.state == "ok" for s in result.statuses if s.source == "pytest"):
                self._remember(ran, result)
        missing = self._stored(failing_files)
        if missing:
            self._remember(missing, self._start_tests("baseline", self._baseline_data(), missing).result())
        tests = tuple(s for f in failing_files for s in self._baseline_tests.get(f, ()))
        return SignalSet.merge([self._static_baseline.result(), SignalSet(tests)])

    def _remember(self, test_files: Sequence[str], result: SignalSet) -> None:
        """Keep the baseline's signals per test file: the baseline never changes within a run. A run that
        ended as it should is also stored for later runs (``baseline_store``)."""
        trusted = all(s.state == "ok" for s in result.statuses if s.source == "pytest")
        for test_file in test_files:
            signals = tuple(s for s in result.signals if _test_file(s) == test_file)
            self._baseline_tests[test_file] = signals
            if trusted and self._baseline_store is not None:
                self._baseline_store.put(test_file, signals)

    def _data(self, texts: Mapping[str, str]) -> dict[str, bytes]:
        return {f.path: f.after.encode(texts.get(f.path, f.after.text)) for f in self._change.files}

    def start(self, texts: Mapping[str, str]) -> None:
        """Start the test run of ``texts`` now, so that it overlaps whatever comes before ``evaluate``
        (the rest of the gate); ``evaluate`` of the same texts then waits on that run."""
        self._start_tests("candidate", self._data(texts), self.tests)

    def evaluate(self, texts: Mapping[str, str]) -> Evaluation:
        """Signals of the files under review with ``texts`` (path -> text) in place."""
        self.start_baseline()
        # The tree is copied and pytest started before the static checks, which are CPU-bound in
        # this process and would otherwise hold the GIL against the copy.
        tests = self._start_tests("candidate", self._data(texts), self.tests)
        static = self._static(dict(texts))
        current = SignalSet.merge([static, tests.result()])
        baseline = self._baseline_for(current)
        return Evaluation(current, compare_change(self._change, baseline, current, texts))

    def _static(self, texts: dict[str, str]) -> SignalSet:
        ruff = self._pool.submit(self._ruff.collect, self._change.root, texts)
        # In a worker, not the caller: the caller is the main thread, where Ctrl-C lands, and the main
        # thread only waits on futures.
        syntax = self._pool.submit(check_compile, texts)
        return SignalSet.merge([ruff.result(), syntax.result()])

    def test_calls(self, texts: Mapping[str, str], test_files: Sequence[str]) -> tuple[CallRecord, ...]:
        """The functions each test of ``test_files`` calls with ``texts`` in place: one more run of those
        tests with a profile hook, made only to localize a failure (``signals/localize.py``)."""
        if not self._settings.tests or not test_files:
            return ()
        lines = sorted(texts)
        return self._start_tests("candidate", self._data(texts), test_files, lines).result().calls

    def _start_tests(
        self, which: str, data: Mapping[str, bytes], tests: Sequence[str], calls: Sequence[str] | None = None
    ) -> Future[SignalSet]:
        """A run of ``tests`` on ``data`` in the tree ``which``; with ``calls``, one that records the
        functions each test calls and the lines it runs of the files ``calls`` names."""
        if not self._settings.tests:
            skipped = SignalSet((), (SourceStatus("pytest", "skipped", "tests are turned off"),))
        elif not tests:
            why = self.selection.describe() or "no tests related to the change"
            skipped = SignalSet((), (SourceStatus("pytest", "skipped", why),))
        else:
            # The rest of each tree never changes within a run: the same files under review and the same
            # tests give the same result, so such a run is never started twice.
            key = hashlib.sha256(
                repr((which, sorted(data.items()), sorted(tests), calls)).encode("utf-8", "surrogateescape")
            ).hexdigest()
            if key in self._runs:
                return self._runs[key]
            if not self._trees.has(which):
                added = (
                    {f.path for f in self._change.files if f.kind == "added"}
                    if which == "baseline"
                    else set()
                )
                pins = dict(self._pinned()) if self._pinned is not None else {}
                gone = {rel for rel, pin in pins.items() if pin is None and rel not in data}
                kept = {rel: pin for rel, pin in pins.items() if pin is not None and rel not in data}
                files = [rel for rel in self._files if rel not in added]
                self._trees.prepare(which, files, {**kept, **data}, added | gone, self.tests)
            else:
                # A run started early for a candidate the gate then refused may still be reading it.
                running = self._inflight.get(which)
                if running is not None:
                    wait([running])
                self._trees.write(which, data, self.tests)
            if calls is not None:
                collect, lines = self._pytest.collect, list(calls)
                run = self._pool.submit(
                    self._trees.collect,
                    which,
                    list(tests),
                    lambda tree, run: collect(tree, run, calls=True, lines=lines),
                )
            elif which == "candidate" and self.selection.describe():
                run = self._pool.submit(self._labelled, which, list(tests))
            else:
                run = self._pool.submit(self._trees.collect, which, list(tests), self._pytest.collect)
            self._runs[key] = self._inflight[which] = run
            return run
        done: Future[SignalSet] = Future()
        done.set_result(skipped)
        return done

    def _labelled(self, which: str, tests: list[str]) -> SignalSet:
        """The candidate's test run, its status saying why these tests (the whole suite)."""
        result = self._trees.collect(which, tests, self._pytest.collect)
        why = self.selection.describe()
        statuses = tuple(
            SourceStatus(s.source, s.state, f"{why}: {s.note}" if s.note else why)
            if s.source == "pytest"
            else s
            for s in result.statuses
        )
        return SignalSet(result.signals, statuses)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        if self._warm is not None:
            self._warm.close()
        self._trees.close()

    def __enter__(self) -> Evaluator:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is not None:
            # Interrupted (or failed) while workers may be waiting on tests: stop those first, or
            # closing would wait for them.
            kill_all = getattr(self._runner, "kill_all", None)
            if callable(kill_all):
                kill_all()
            if self._warm is not None:
                self._warm.kill_all()
        self.close()


def _test_file(signal: Signal) -> str:
    """The test file a pytest signal belongs to (node ids start with it)."""
    return signal.code.removeprefix("collect:").split("::")[0]
