"""``coderefine review``: review a branch's change for CI, with fixes verified before they are offered.

The signals of the head are compared with the merge base; the critic then reviews each file (files with
introduced signals first, within the token and cost budget). For every issue the reviser proposes a fix;
a fix is offered as a suggestion only if it applies to the head file, passes the gate, and is shown
better: the signals of head-plus-fix improve and none got worse, or they are no worse and the critic, shown
the fixed file, no longer raises the issue there. Otherwise the issue is reported in prose. Nothing is
ever written.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from coderefine.config import Settings
from coderefine.doors.review.findings import (
    Finding,
    commentable,
    dedupe,
    fingerprinted,
    from_signal,
    right_side_lines,
    take_fix,
)
from coderefine.doors.review.shard import shard_files
from coderefine.doors.review.verify import FileReview, review_file
from coderefine.models.base import Model, Usage
from coderefine.project.change import Change, FileChange
from coderefine.project.runner import Runner
from coderefine.refiner.ledger import Ledger
from coderefine.refiner.records import ModelCharge
from coderefine.refiner.rules import ProjectRules, base_rules
from coderefine.refiner.session import Session
from coderefine.signals.base import SEVERITY_RANK, Comparison, SourceStatus
from coderefine.signals.evaluate import BaselineStore, Evaluation, Evaluator
from coderefine.signals.warm import WarmPytest


@dataclass(frozen=True)
class ReviewReport:
    base: str
    head: str
    intent: str
    intent_source: str
    findings: tuple[Finding, ...]
    diff: str
    right: Mapping[str, frozenset[int]]
    statuses: tuple[SourceStatus, ...]
    reviewed: tuple[str, ...]
    not_reviewed: tuple[str, ...] = ()
    model_note: str = ""
    usage: Mapping[str, Usage] = field(default_factory=dict)
    cost: float = 0.0
    charges: tuple[ModelCharge, ...] = ()  # per role and model
    files: tuple[str, ...] = ()  # the changed files this report covers (all of them unless sharded)
    shard: tuple[int, int] | None = None  # (K, N) of a sharded run (``review --shard K/N``)
    # Fingerprints of findings a person dismissed earlier, left out of ``findings`` (dismissed.py).
    held_back: tuple[str, ...] = ()

    def inline(self, finding: Finding) -> bool:
        return commentable(finding, self.right)

    def exit_code(self, fail_on: str) -> int:
        if fail_on == "never":
            return 0
        floor = SEVERITY_RANK[fail_on]
        return 1 if any(SEVERITY_RANK[f.severity] >= floor for f in self.findings) else 0


def pull_request_intent(event_path: str | None) -> str:
    """The pull request's title and body from GitHub's event file, or an empty string."""
    if not event_path:
        return ""
    try:
        event = json.loads(Path(event_path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    pull = event.get("pull_request") if isinstance(event, dict) else None
    if not isinstance(pull, dict):
        return ""
    title = str(pull.get("title") or "").strip()
    body = str(pull.get("body") or "").strip()
    return f"{title}\n\n{body}".strip()


def choose_intent(
    event_path: str | None, messages: Sequence[str], flag: str | None, default: str
) -> tuple[str, str]:
    """The intent and its source: the pull request, else the commits, else --intent, else the default."""
    pull = pull_request_intent(event_path)
    if pull:
        return pull, "pull request"
    if messages:
        return "\n\n".join(reversed(messages)), "commit messages"
    if flag:
        return flag, "--intent"
    return default, "default"


class _FileView:
    """One file's view of the shared evaluation: candidates of that file are evaluated with the other
    files at head, and only its own signals (and the tests') are shown to its critic."""

    def __init__(self, shared: Evaluator, head: Mapping[str, str], path: str, lock: threading.Lock) -> None:
        self._shared = shared
        self._head = head
        self._path = path
        self._lock = lock

    def evaluate(self, texts: Mapping[str, str]) -> Evaluation:
        # The files' critiques run concurrently, but their candidates share the evaluator's trees.
        with self._lock:
            evaluation = self._shared.evaluate({**self._head, **texts})
        return Evaluation(evaluation.signals, self.narrow(evaluation.comparison))

    def narrow(self, comparison: Comparison) -> Comparison:
        def mine(signals: Sequence[object]) -> tuple[object, ...]:
            return tuple(s for s in signals if s.path == self._path or s.source == "pytest")  # type: ignore[attr-defined]

        return Comparison(
            mine(comparison.introduced),  # type: ignore[arg-type]
            mine(comparison.existing),  # type: ignore[arg-type]
            mine(comparison.fixed),  # type: ignore[arg-type]
            comparison.statuses,
        )


def run_review(
    change: Change,
    settings: Settings,
    model: Model | None,
    runner: Runner,
    environ: Mapping[str, str],
    project_files: Sequence[str],
    *,
    intent: str,
    intent_source: str,
    head: str,
    populate_tree: Callable[[Path], None] | None = None,
    model_note: str = "",
    clock: Callable[[], float] = time.monotonic,
    shard: tuple[int, int] | None = None,
    jobs: int = 1,
    on_file: Callable[[int, int, float, tuple[str, ...]], None] | None = None,
    warm: WarmPytest | None = None,
    base_results: BaselineStore | None = None,
    rules: ProjectRules | None = None,
) -> ReviewReport:
    """Review ``change``; with ``shard`` (K, N), only the files of shard K (``shard.shard_files`` by
    size) are reported and critiqued, while the signals still come from the whole change against the merge
    base: every shard compares the same trees and runs the tests related to the whole change, so a test
    that another shard's file breaks is found the same way. A failing test in a file outside the change
    is reported by every shard; ``coderefine merge`` keeps it once (same fingerprint).

    ``jobs`` files are critiqued (and their fixes proposed) at once; the signal runs of proposed fixes
    take turns. When the budget is reached, files not yet started are listed as not reviewed.
    ``on_file(done, total, cost so far, files being critiqued)`` is called as each file's review starts
    and ends (progress). ``warm``: a
    warm test server already started for the project (``signals.prestart``). ``base_results``: the base's
    test results kept between runs (``basecache.base_results``). ``rules``: the project's rules for the
    critic; by default the merge base's (``rules.base_rules``), never the head's."""
    rules = rules or base_rules(change, settings)
    mine = _shard_paths(change, shard)
    changed = {f.path for f in change.files}
    head_texts = {f.path: f.after.text for f in change.files}
    diff = change.diff(context=3)
    right = {path: frozenset(lines) for path, lines in right_side_lines(diff).items()}
    findings: list[Finding] = []
    reviewed: list[str] = []
    not_reviewed: list[str] = []
    ledger = Ledger(settings, clock)
    with Evaluator(
        change,
        settings,
        runner,
        environ,
        project_files,
        populate_tree=populate_tree,
        warm=warm,
        baseline_store=base_results,
    ) as evaluator:
        # The merge base's tests run alongside the head's: a review exists to find failures, and when the
        # head fails a test, the base's result is then already there.
        evaluator.start_baseline(tests=True)
        initial = evaluator.evaluate(head_texts)
        findings.extend(
            from_signal(s, head_texts)
            for s in initial.comparison.introduced
            if s.path in mine or s.path not in changed
        )
        signalled = {s.path for s in initial.comparison.introduced}
        order = sorted(
            (f for f in change.files if f.path in mine), key=lambda f: (f.path not in signalled, f.path)
        )
        if model is not None:
            lock, stop = threading.Lock(), threading.Event()
            finished = [0]
            running: list[str] = []  # the files being critiqued now, in the order they started

            def one(file: FileChange) -> FileReview:
                if stop.is_set():
                    return FileReview(file.path, started=False)
                if on_file is not None:
                    with lock:
                        running.append(file.path)
                        on_file(finished[0], len(order), ledger.cost, tuple(running))
                single = Change(change.root, (file,), change.source, change.base, change.messages)
                view = _FileView(evaluator, head_texts, file.path, lock)
                session = Session(
                    single, settings, model, view, intent, _Quiet(), clock, ledger=ledger, rules=rules
                )
                try:
                    result = review_file(session, view.narrow(initial.comparison), initial, file, head_texts)
                finally:
                    with lock:
                        if file.path in running:
                            running.remove(file.path)
                if not result.started:
                    stop.set()
                elif on_file is not None:
                    with lock:
                        finished[0] += 1
                        on_file(finished[0], len(order), ledger.cost, tuple(running))
                return result

            if jobs > 1 and len(order) > 1:
                with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="coderefine-review") as pool:
                    results = list(pool.map(one, order))
            else:
                results = [one(file) for file in order]
            for result in results:
                for finding, resolved in zip(result.findings, result.restates, strict=True):
                    if not take_fix(findings, finding, resolved):
                        findings.append(finding)
                if result.note:
                    model_note = f"{model_note} {result.note}".strip()
                if result.critiqued:
                    reviewed.append(result.path)
                elif not result.started:
                    not_reviewed.append(result.path)
    findings = sorted(dedupe(fingerprinted(findings)), key=lambda f: f.rank)
    return ReviewReport(
        base=change.base or "",
        head=head,
        intent=intent,
        intent_source=intent_source,
        findings=tuple(findings),
        diff=diff,
        right=right,
        statuses=initial.comparison.statuses,
        reviewed=tuple(reviewed),
        not_reviewed=tuple(not_reviewed),
        model_note=model_note,
        usage=dict(ledger.usage),
        cost=ledger.cost,
        charges=ledger.charges(),
        files=tuple(sorted(mine)),
        shard=shard,
    )


def _shard_paths(change: Change, shard: tuple[int, int] | None) -> frozenset[str]:
    if shard is None:
        return frozenset(f.path for f in change.files)
    sizes = [(f.path, len(f.after.encode())) for f in change.files]
    return frozenset(shard_files(sizes, *shard))


class _Quiet:
    def phase(self, name: str, round_number: int, tokens: int) -> None:
        pass
