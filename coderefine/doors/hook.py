"""The pre-commit door: review exactly what will be committed, file by file, with a review cache.

Each staged Python file is reviewed on its own, so that an unchanged file costs nothing on the next
commit (its cached verdict is reused: no model call, no test run) and files are reviewed concurrently
(``jobs`` at a time). Tests run in a tree exported from the git index, never the working tree. In fix
mode a fix is written to the working-tree file only when that file holds exactly the staged content
(pre-commit stashes unstaged work; the plain git hook does not), so unstaged work is never touched; the
hook then fails, as ``ruff --fix`` does, and the user reviews and re-stages.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from coderefine.config import Settings
from coderefine.errors import CoderefineError
from coderefine.models.roles import models_key
from coderefine.project.cache import ReviewCache, cache_key, content_hash
from coderefine.project.change import Change, from_staged
from coderefine.project.gitio import GitRepo
from coderefine.project.rules import Reader, RuleSource, base_settings, commit_reader, find_rules
from coderefine.project.runner import Runner
from coderefine.project.writes import FileWrite, Journal
from coderefine.version import __version__

if TYPE_CHECKING:
    from coderefine.models.base import Model
    from coderefine.refiner.records import RefineResult
    from coderefine.signals.base import Comparison, Signal

# The version of the prompts and formats; part of every cache key. Kept equal to
# coderefine.refiner.prompting.PROTOCOL_VERSION (a test checks it) so that a cache hit imports nothing more.
PROTOCOL_VERSION = "5"

# The characters of introduced signals a file's verdict lists (about 25 lines); the rest is counted.
HOOK_SCREEN = 2_000

Mode = Literal["fix", "check", "signals"]
Status = Literal["clean", "fixed", "findings", "skipped", "not-written"]


def _nothing(rel: str) -> None:
    """The reader of a repository with no commit yet: no trusted version, so no rules."""
    return None


@dataclass(frozen=True)
class FileVerdict:
    path: str
    status: Status
    lines: tuple[str, ...] = ()
    cached: bool = False
    cost: float = 0.0  # of this run's model calls for the file (a cached verdict cost nothing now)
    calls: str = ""  # those calls' tokens and cost per role and model, as ``fix`` reports them

    @property
    def failed(self) -> bool:
        return self.status in ("fixed", "findings", "not-written")


@dataclass(frozen=True)
class HookResult:
    verdicts: tuple[FileVerdict, ...]
    written: tuple[str, ...] = ()
    model_used: bool = False

    @property
    def exit_code(self) -> int:
        return 1 if any(v.failed for v in self.verdicts) else 0

    def render(self) -> str:
        lines: list[str] = []
        for verdict in self.verdicts:
            tag = " (cached)" if verdict.cached else ""
            lines.append(f"{verdict.path}: {verdict.status}{tag}")
            lines.extend("  " + line for line in verdict.lines)
            if verdict.calls:
                lines.append(f"  tokens: {verdict.calls}")
        skipped = [v.path for v in self.verdicts if v.status == "skipped"]
        if skipped:
            lines.append(f"time limit reached: skipped {', '.join(skipped)} (nothing written for them)")
        if self.written:
            lines.append(
                f"coderefine wrote fixes to {', '.join(self.written)}: review them, "
                "'git add' them and commit again ('coderefine undo' restores the previous version)"
            )
        cached = sum(1 for v in self.verdicts if v.cached)
        cost = f", cost ${sum(v.cost for v in self.verdicts):.4f}" if self.model_used else ""
        lines.append(f"coderefine hook: {len(self.verdicts)} file(s), {cached} from the cache{cost}")
        return "\n".join(lines) + "\n"


def signal_rows(signals: Sequence[Signal]) -> tuple[str, ...]:
    """One line per introduced signal, folded by where tests fail: a one-line bug that fails 137 tests
    is a screen of the first failures of each group and a count, not 137 lines in a commit's output."""
    from coderefine.report.text import signal_entries, signal_line

    return tuple(row.removeprefix("  ") for row in signal_entries(signals, HOOK_SCREEN, full=signal_line))


def context_lines(comparison: Comparison) -> tuple[str, ...]:
    """How many signals the change did not introduce, and which tests ran: so that "clean" says what
    it rests on."""
    rows = []
    if comparison.existing:
        rows.append(f"already there before the change (not counted): {len(comparison.existing)}")
    # "ok" only when every test that ran passed (a run with failures says how many).
    failed = sum(
        1
        for s in (*comparison.introduced, *comparison.existing)
        if s.source == "pytest" and not s.code.startswith("collect:")
    )
    rows += [
        f"pytest: {s.note}, {failed} failed" if s.state == "ok" and failed else f"pytest {s.state}: {s.note}"
        for s in comparison.statuses
        if s.source == "pytest" and s.note
    ]
    return tuple(rows)


def settings_key(settings: Settings) -> list[object]:
    """The settings that shape a file's review, for a cache key (the hook's and a sweep's)."""
    return [
        settings.rounds,
        settings.ruff_select,
        settings.ruff_format,
        settings.tests,
        settings.test_command,
        settings.python,
        settings.fail_on,
        settings.test_timeout,
        # Only a chosen format: under "auto" the models (in the key already) decide it, and old entries stay.
        *([settings.edit_format] if settings.edit_format != "auto" else []),
    ]


@dataclass(frozen=True)
class _Work:
    """The outcome of one file's review before anything is written."""

    verdict: FileVerdict
    key: str
    writes: tuple[FileWrite, ...] = ()
    final_key: str | None = None  # the cache key of the fixed content, when the critic passed it


def _charged(work: _Work, result: RefineResult) -> _Work:
    """``work`` with what its model calls cost, as ``fix`` reports it (not cached: a cache hit is free)."""
    from coderefine.report.usage import charges_text

    calls = charges_text(result.charges)
    return replace(work, verdict=replace(work.verdict, cost=result.cost, calls=calls)) if calls else work


class Hook:
    def __init__(
        self,
        repo: GitRepo,
        settings: Settings,
        *,
        mode: Mode,
        intent: str,
        model_factory: Callable[[], Model],
        runner: Runner,
        environ: Mapping[str, str],
        cache: ReviewCache,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._repo = repo
        self._settings = settings
        self._mode = mode
        self._intent = intent
        self._model_factory = model_factory
        self._model: Model | None = None
        self._runner = runner
        self._environ = environ
        self._cache = cache
        self._clock = clock
        # The project's rules come from HEAD, never from the index: a commit must not write the rules it
        # is reviewed by (a staged AGENTS.md or pyproject.toml counts from the next commit on).
        self._rules_read: Reader = commit_reader(repo, "HEAD") if repo.has_head() else _nothing
        self._rules_settings = base_settings(settings, self._rules_read)

    def run(self, paths: Sequence[Path], *, cwd: Path, timeout: float) -> HookResult:
        """Review the staged content of ``paths`` (all staged Python files when empty)."""
        max_bytes = self._settings.max_file_kib * 1024
        change = from_staged(paths or None, cwd=cwd, repo=self._repo, max_bytes=max_bytes)
        deadline = self._clock() + timeout if timeout else None
        singles = [Change(change.root, (f,), "staged") for f in change.files]
        keys = {c.files[0].path: self._key(c) for c in singles}
        works: dict[str, _Work] = {}
        misses: list[Change] = []
        for single in singles:
            path = single.files[0].path
            hit = self._cache.get(keys[path])
            if hit is not None:
                verdict = FileVerdict(
                    path, hit.get("status", "clean"), tuple(hit.get("lines", ())), cached=True
                )
                works[path] = _Work(verdict, keys[path])
            else:
                misses.append(single)
        if misses and self._mode != "signals":
            self._model = self._model_factory()
        files = self._repo.project_files()
        with ThreadPoolExecutor(max_workers=self._settings.jobs) as pool:
            futures: dict[str, Future[_Work]] = {
                c.files[0].path: pool.submit(self._review, c, keys[c.files[0].path], files, deadline)
                for c in misses
            }
            try:
                for path, future in futures.items():
                    works[path] = future.result()
            except BaseException:
                for future in futures.values():
                    future.cancel()
                raise
        ordered = [works[f.path] for f in change.files]
        written = self._write(ordered)
        for work in ordered:
            if work.verdict.status in ("clean", "findings") and not work.verdict.cached:
                self._remember(work.key, work.verdict)
            if work.final_key and work.verdict.path in written:
                self._remember(
                    work.final_key, FileVerdict(work.verdict.path, "clean", ("passed by the critic",))
                )
        return HookResult(tuple(w.verdict for w in ordered), written, self._model is not None)

    def _remember(self, key: str, verdict: FileVerdict) -> None:
        self._cache.put(key, {"status": verdict.status, "lines": list(verdict.lines), "path": verdict.path})

    def _key(self, change: Change, after: str | None = None) -> str:
        file = change.files[0]
        settings = self._settings
        return cache_key(
            {
                "coderefine": __version__,
                "protocol": PROTOCOL_VERSION,
                "mode": self._mode,
                "model": models_key(settings) if self._mode != "signals" else None,
                "intent": self._intent,
                "settings": settings_key(settings),
                "path": file.path,
                "rules": content_hash(repr(self._rules_for(file.path))),
                "before": content_hash(file.before.text) if file.before else None,
                "after": content_hash(after if after is not None else file.after.text),
            }
        )

    def _rules_for(self, path: str) -> tuple[RuleSource, ...]:
        settings = self._rules_settings
        return find_rules([path], self._rules_read, settings.rules_files, settings.rules)

    def _review(self, change: Change, key: str, files: Sequence[str], deadline: float | None) -> _Work:
        # Imported here: a run where every file is a cache hit never needs them.
        from coderefine.refiner.loop import refine, review
        from coderefine.refiner.rules import ProjectRules

        rules = ProjectRules(self._rules_settings, self._rules_read)
        from coderefine.signals.check import CheckResult
        from coderefine.signals.evaluate import Evaluator

        path = change.files[0].path
        if deadline is not None and self._clock() >= deadline:
            return _Work(FileVerdict(path, "skipped"), key)
        with Evaluator(
            change, self._settings, self._runner, self._environ, files, populate_tree=self._repo.export_index
        ) as evaluator:
            if self._mode == "signals":
                evaluator.start_baseline()
                evaluation = evaluator.evaluate({path: change.files[0].after.text})
                result = CheckResult(change, evaluation, tuple(evaluator.tests), evaluator.selection)
                failing = result.failed(self._settings.fail_on)
                lines = signal_rows(evaluation.comparison.introduced)
                lines += tuple(f"{s.source} did not run: {s.note}" for s in evaluation.comparison.missing())
                lines += context_lines(evaluation.comparison)
                return _Work(FileVerdict(path, "findings" if failing else "clean", lines), key)
            assert self._model is not None
            if self._mode == "check":
                reviewed = review(
                    change,
                    self._settings,
                    self._model,
                    evaluator,
                    intent=self._intent,
                    deadline=deadline,
                    read_project=self._staged_text,
                    rules=rules,
                )
                return _charged(self._check_work(reviewed, key), reviewed)
            refined = refine(
                change,
                self._settings,
                self._model,
                evaluator,
                intent=self._intent,
                deadline=deadline,
                read_project=self._staged_text,
                rules=rules,
            )
            return _charged(self._fix_work(refined, key), refined)

    def _staged_text(self, rel: str) -> str | None:
        """A file as the commit will hold it (the tests run in a tree exported from the index, and the
        failing tests' source shown to the model is read from the same place), or None."""
        try:
            blob = self._repo.index_blob(rel)
            # Universal newlines, as the disk reader it stands in for reads a file.
            return (
                blob.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n") if blob is not None else None
            )
        except (CoderefineError, UnicodeDecodeError):  # git's errors too: no spec, not a failed review
            return None

    def _findings(self, result: RefineResult, findings: bool) -> tuple[str, ...]:
        """What the hook prints for a file: the introduced signals and (when ``findings`` remain) the
        critic's issues, then how many signals were already there and which tests ran."""
        from coderefine.doors.fix import write_decision
        from coderefine.signals.base import SEVERITY_RANK

        floor = SEVERITY_RANK.get(self._settings.fail_on, 4)
        # What stays in the file: the final version when it is written, else the file as it is.
        declined = result.changed and not write_decision(result).write
        comparison = result.initial.comparison if declined else result.evaluation.comparison
        lines = list(signal_rows(comparison.introduced))
        lines += [f"{s.source} did not run: {s.note}" for s in comparison.missing()]
        if findings and result.critique is not None and result.stop != "passed":
            for issue in result.critique.issues:
                if SEVERITY_RANK[issue.severity] >= floor:
                    lines.append(
                        f"{issue.path}:{issue.line}: [{issue.severity}] {issue.title} — {issue.suggestion}"
                    )
        if not declined:  # what the written fix answers: the critic's issues of its accepted rounds
            for record in result.rounds:
                if record.outcome == "accepted" and record.critique is not None:
                    lines += [
                        f"fixed: {i.path}:{i.line}: [{i.severity}] {i.title}" for i in record.critique.issues
                    ]
        return (*lines, *context_lines(comparison))

    def _check_work(self, result: RefineResult, key: str) -> _Work:
        from coderefine.doors.fix import FixOutcome

        path = result.change.files[0].path
        if result.stop == "timeout":
            return _Work(FileVerdict(path, "skipped"), key)
        findings = FixOutcome(result).findings_remain(self._settings.fail_on)
        status: Status = "findings" if findings else "clean"
        return _Work(FileVerdict(path, status, self._findings(result, findings)), key)

    def _fix_work(self, result: RefineResult, key: str) -> _Work:
        from coderefine.doors.fix import FixOutcome, pending_writes, write_decision
        from coderefine.report.refine import final_diff

        path = result.change.files[0].path
        if result.stop == "timeout":
            return _Work(FileVerdict(path, "skipped"), key)
        findings = FixOutcome(result).findings_remain(self._settings.fail_on)
        lines = self._findings(result, findings)
        if not result.changed:
            return _Work(FileVerdict(path, "findings" if findings else "clean", lines), key)
        diff = tuple(final_diff(result).rstrip("\n").splitlines())
        decision = write_decision(result)
        if not decision.write:
            note = f"not written: {decision.reason}; the best candidate was:"
            return _Work(FileVerdict(path, "findings" if findings else "clean", (*lines, note, *diff)), key)
        writes, conflicts = pending_writes(result)
        if conflicts:
            note = "not written: the file has unstaged changes; stage or stash them and commit again"
            return _Work(FileVerdict(path, "not-written", (note, *lines, *diff)), key)
        final_key = None
        if result.stop == "passed":
            final_key = self._key(result.change, after=result.final[path])
        return _Work(FileVerdict(path, "fixed", (*lines, *diff)), key, tuple(writes), final_key)

    def _write(self, works: Sequence[_Work]) -> tuple[str, ...]:
        writes = [w for work in works for w in work.writes]
        if not writes:
            return ()
        Journal.for_project(self._repo.root, self._repo.git_dir).write(writes)
        return tuple(w.path for w in writes)
