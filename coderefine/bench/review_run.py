"""Run ``coderefine review`` on a review task: a git repository whose base is the clean library and
whose head is the pull request (a rewrite, with or without a mutant), and measure what it found.

A catch is an error-level finding on the mutant's lines; on a negative, every error-level finding is a
false alarm. Every fix the reviewer tried is counted; an offered suggestion is one it verified; a
verified suggestion fixes the mutant when the library's whole suite (hidden tests included) passes with
it applied to the head.
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Protocol

from coderefine.bench.result import TaskResult, charge_records
from coderefine.bench.score import score
from coderefine.bench.strategies import Strategy
from coderefine.bench.task import BenchTask, Task
from coderefine.config import Settings
from coderefine.doors.review.findings import Finding
from coderefine.doors.review.run import ReviewReport, run_review
from coderefine.errors import ModelError, ServerDiedError, ToolError
from coderefine.models.base import Model
from coderefine.project.change import from_branch
from coderefine.project.gitio import GitRepo
from coderefine.project.runner import Runner

BASE_BRANCH = "base"
_GIT: tuple[str, ...] = ("git", "-c", "user.name=coderefine bench", "-c", "user.email=bench@localhost")
_GIT += ("-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null")


class ReviewTask(Task, Protocol):
    def clean_module(self) -> str: ...
    def mutated_lines(self, clean_module: str) -> frozenset[int]: ...


@dataclasses.dataclass(frozen=True)
class ReviewOutcome:
    caught: bool
    false_alarms: int  # error-level findings that are not on the mutant's lines
    fixes_tried: int
    verified: int  # suggestions offered (the reviewer offers only verified fixes)
    verified_fixing: int  # of those, the ones with which the whole suite passes
    findings: int
    error: str = ""
    report: ReviewReport | None = None


def run_review_task(
    task: ReviewTask,
    model: Model,
    settings: Settings,
    runner: Runner,
    environ: Mapping[str, str],
    clock: Callable[[], float] = time.monotonic,
) -> ReviewOutcome:
    with tempfile.TemporaryDirectory(prefix="coderefine-bench-review-") as scratch:
        folder = task.materialise(Path(scratch) / "task")
        module = folder / task.path
        head_text = module.read_text("utf-8")
        clean = task.clean_module()
        _git(runner, folder, "init", "-q", "-b", BASE_BRANCH)
        module.write_text(clean, "utf-8")
        _git(runner, folder, "add", "-A")
        _git(runner, folder, "commit", "-q", "-m", "base")
        _git(runner, folder, "checkout", "-q", "-b", "pull-request")
        module.write_text(head_text, "utf-8")
        _git(runner, folder, "commit", "-q", "-am", task.intent)
        repo = GitRepo.find(folder)
        assert repo is not None
        change = from_branch(repo, BASE_BRANCH, max_bytes=4 << 20)
        head = repo.rev_parse("HEAD")
        run_settings = dataclasses.replace(
            settings, tests=True, ruff_format=False, fail_on="error", python=task.python or settings.python
        )
        try:
            report = run_review(
                change,
                run_settings,
                model,
                runner,
                environ,
                repo.project_files(),
                intent=task.intent,
                intent_source="pull request",
                head=head,
                populate_tree=lambda dest: repo.export_commit(head, dest),
                clock=clock,
            )
        except ServerDiedError:
            raise  # every later task would meet the same dead server: the run stops here
        except ModelError as exc:
            return ReviewOutcome(False, 0, 0, 0, 0, 0, error=str(exc))
        mutated = task.mutated_lines(clean)
        errors = [f for f in report.findings if f.severity == "error"]
        on_bug = [f for f in errors if f.path == task.path and _lines(f) & mutated]
        tried = [f for f in report.findings if f.source == "critic" and _fix_tried(f)]
        offered = [f for f in report.findings if f.suggestion is not None]
        fixing = sum(
            score(task, _applied(head_text, f), Path(scratch), runner, environ).passed
            for f in offered
            if f.path == task.path
        )
    return ReviewOutcome(
        caught=bool(on_bug),
        false_alarms=len(errors) - len(on_bug),
        fixes_tried=len(tried),
        verified=len(offered),
        verified_fixing=fixing,
        findings=len(report.findings),
        report=report,
    )


def _git(runner: Runner, cwd: Path, *args: str) -> None:
    done = runner.run([*_GIT, *args], cwd=cwd, timeout=120)
    if done.code != 0:
        raise ToolError(f"git {args[0]} failed in a review task's repository: {done.err.strip()[:300]}")


def _lines(finding: Finding) -> set[int]:
    return set(range(finding.line, max(finding.end_line, finding.line) + 1))


def _fix_tried(finding: Finding) -> bool:
    return finding.suggestion is not None or (bool(finding.note) and not finding.note.startswith("no fix"))


def _applied(text: str, finding: Finding) -> str:
    """``text`` with the finding's suggestion (a replacement of its lines) applied."""
    assert finding.suggestion is not None
    lines = text.splitlines(keepends=True)
    suggestion = finding.suggestion
    new = suggestion.text + "\n" if suggestion.text else ""
    return "".join(lines[: suggestion.start - 1]) + new + "".join(lines[suggestion.end :])


def review_result(
    task: BenchTask,
    strategy: Strategy,
    model: Model,
    settings: Settings,
    runner: Runner,
    environ: Mapping[str, str],
    clock: Callable[[], float],
) -> TaskResult:
    """A review task's result: "fixed" is caught (an error-level finding on the mutant's lines); a
    negative is correct code, so it passes before and after (a review writes nothing)."""
    start = clock()
    outcome = run_review_task(task, model, settings, runner, environ, clock)  # type: ignore[arg-type]
    report = outcome.report
    usage = {"input": 0, "output": 0, "read": 0, "write": 0}
    for spent in report.usage.values() if report else ():
        usage["input"] += spent.input_tokens
        usage["output"] += spent.output_tokens
        usage["read"] += spent.cache_read_tokens
        usage["write"] += spent.cache_write_tokens
    clean = task.kind != "review"
    return TaskResult(
        task_id=task.task_id,
        bug_type=task.bug_type,
        strategy=strategy.name,
        model=model.name,
        passed_before=clean,
        passed_after=clean or outcome.caught,
        rounds=1 if report and report.reviewed else 0,
        input_tokens=usage["input"],
        output_tokens=usage["output"],
        cache_read_tokens=usage["read"],
        cache_write_tokens=usage["write"],
        cost=report.cost if report else 0.0,
        seconds=clock() - start,
        gate_rejections=0,
        stop="reviewed" if report else "error",
        error=outcome.error,
        kind=task.kind,
        shape=task.shape,
        strength=task.strength,
        mutation=task.mutation,
        models=charge_records(report.charges) if report else (),
        caught=outcome.caught,
        false_alarms=outcome.false_alarms,
        fixes_tried=outcome.fixes_tried,
        verified=outcome.verified,
        verified_fixing=outcome.verified_fixing,
    )
