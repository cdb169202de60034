"""The self-refine loop, grounded in signals: critic -> reviser -> gate -> signals -> accept if no worse.

``refine(change, settings, model, evaluator, ...)`` is the engine behind every door. It never writes a
user's file: it returns a ``RefineResult`` whose ``final`` texts have passed the gate and whose signals
were measured in an isolated tree; the caller decides to write, show or publish them.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Literal

from coderefine.config import Settings
from coderefine.edits.gate import prepare_gate
from coderefine.errors import BudgetExceededError, TimeLimitError
from coderefine.models.base import Model
from coderefine.project.change import Change
from coderefine.refiner.acceptance import blocking, digest, no_worse, signal_critique, worse_critique
from coderefine.refiner.critique import Critique, CritiqueError
from coderefine.refiner.policy import confirmed_by_signals, covers, merge_refusal, name_backed
from coderefine.refiner.records import RefineResult, RoundRecord, StopReason
from coderefine.refiner.rules import ProjectRules
from coderefine.refiner.session import Evaluates, NoProgress, Progress, RejectedEdit, Session
from coderefine.refiner.signal_section import preexisting, split_context
from coderefine.signals.base import Comparison
from coderefine.signals.evaluate import Evaluation


def refine(
    change: Change,
    settings: Settings,
    model: Model,
    evaluator: Evaluates,
    *,
    intent: str | None = None,
    draft: bool = False,
    progress: Progress | None = None,
    clock: Callable[[], float] = time.monotonic,
    deadline: float | None = None,
    max_rounds: int | None = None,
    use_critic: bool = True,
    retry_worse: bool = False,
    spec_tests: Sequence[str] = (),
    read_project: Callable[[str], str | None] | None = None,
    rules: ProjectRules | None = None,
) -> RefineResult:
    """Refine ``change`` with ``model`` for at most ``settings.rounds`` rounds; keep the best candidate.

    With ``draft``, the author first writes the change from the intent (the files may be empty). No model
    call starts after ``deadline`` (a ``clock()`` value); the run then stops with reason "timeout".
    ``max_rounds`` overrides the setting (0: the author's draft only); without ``use_critic`` each round's
    critique is made from the signals alone (an ablation of the benchmark). With ``retry_worse`` a
    candidate that makes a signal worse does not end the run: the next round's reviser is told what got
    worse (Self-Refine's retry), within the round budget. ``spec_tests``: the tests whose source the
    author is shown when no signal says which fail (a run without signals, the bench's one-shot).
    ``read_project``: the project's other files as the tests see them (the failing tests' source is read
    through it; a staged change's come from the index); the disk by default. ``rules``: the project's
    rules for the critic (the disk's by default; the hook passes HEAD's).
    """
    prepare_gate()
    run = Session(
        change,
        settings,
        model,
        evaluator,
        intent or settings.intent,
        progress or NoProgress(),
        clock,
        deadline,
        merge=settings.merge == "one-issue",
        spec_tests=spec_tests,
        read_project=read_project,
        rules=rules,
    )
    texts = dict(run.original)
    initial = current = run.evaluate(texts, 0)
    # When tests fail, where they point decides what every request of the run shows first.
    run.localize(texts, initial)
    whole = [f.path for f in change.files if f.kind == "whole"]
    run.prompts.context = preexisting(initial.comparison, whole)

    def faults(comparison: Comparison) -> Comparison:
        return dataclasses.replace(comparison, introduced=split_context(comparison, run.prompts.context)[0])

    rounds: list[RoundRecord] = []
    seen = {digest(texts)}
    stop: StopReason = "rounds"
    drafted = False
    last_critique: Critique | None = None

    if draft:
        try:
            request = run.author_request(texts, current.comparison)
            candidate, changed = run.edit(request, texts, 0)
        except (BudgetExceededError, RejectedEdit) as exc:
            record, reason = _ended(0, None, current.comparison, exc)
            rounds.append(record)
            reason = "gate" if isinstance(exc, RejectedEdit) else reason
            return _result(run, texts, initial, current, rounds, reason, drafted, None)
        evaluation = run.evaluate(candidate, 0)
        rounds.append(
            RoundRecord(0, None, "accepted", current.comparison, evaluation.comparison, changed, "drafted")
        )
        texts, current, drafted = candidate, evaluation, True
        seen.add(digest(texts))

    worse: Critique | None = None
    for number in range(1, (settings.rounds if max_rounds is None else max_rounds) + 1):
        # first-critique = "signals": when the tools already name what is wrong, the first round's
        # critique is made of those signals, and the critic's first call is saved.
        from_signals = not use_critic or (
            number == 1
            and settings.first_critique == "signals"
            and blocking(faults(current.comparison), settings.fail_on) > 0
            and not current.comparison.missing()
        )
        try:
            if worse is not None:
                critique, worse = worse, None
            elif from_signals:
                critique = signal_critique(current.comparison)
            else:
                critique = run.critique(texts, current, number)
        except (BudgetExceededError, CritiqueError) as exc:
            record, stop = _ended(number, None, current.comparison, exc)
            rounds.append(record)
            break
        last_critique = critique
        # Lint already in a whole file at the start is context: it does not make the loop revise.
        clean = blocking(faults(current.comparison), settings.fail_on) == 0
        if clean and (critique.verdict == "pass" or not critique.issues):
            rounds.append(RoundRecord(number, critique, "passed", current.comparison))
            stop = "passed"
            break
        try:
            candidate, changed, merged, unused = _revision(run, critique, texts, current, number)
        except (BudgetExceededError, RejectedEdit) as exc:
            record, stop = _ended(number, critique, current.comparison, exc)
            rounds.append(record)
            break
        if candidate == texts:
            rounds.append(
                RoundRecord(
                    number, critique, "no-edits", current.comparison, note="the reviser changed nothing"
                )
            )
            stop = "no-progress"
            break
        key = digest(candidate)
        if key in seen:
            rounds.append(
                RoundRecord(
                    number,
                    critique,
                    "rejected",
                    current.comparison,
                    changed=changed,
                    note="the revision repeats an earlier version",
                )
            )
            stop = "repeated"
            break
        seen.add(key)
        evaluation = run.evaluate(candidate, number)
        if not no_worse(evaluation.comparison, current.comparison):
            rounds.append(
                RoundRecord(
                    number,
                    critique,
                    "rejected",
                    current.comparison,
                    evaluation.comparison,
                    changed,
                    "; ".join(n for n in ("a signal got worse; the candidate was discarded", unused) if n),
                )
            )
            if retry_worse:
                worse = worse_critique(evaluation.comparison, current.comparison)
                continue
            stop = "no-progress"
            break
        resolved = settings.confirm == "signals" and confirmed_by_signals(
            critique, current.comparison, evaluation.comparison, texts, settings.fail_on, merged
        )
        notes = (
            "the critic's edits for its one signal-backed issue: no reviser call" if merged else unused,
            "the signals behind every issue are resolved: no confirming critique" if resolved else "",
        )
        note = "; ".join(n for n in notes if n)
        rounds.append(
            RoundRecord(
                number, critique, "accepted", current.comparison, evaluation.comparison, changed, note
            )
        )
        texts, current = candidate, evaluation
        if resolved:
            stop = "passed"
            break
    return _result(run, texts, initial, current, rounds, stop, drafted, last_critique)


def _revision(
    run: Session, critique: Critique, texts: Mapping[str, str], current: Evaluation, number: int
) -> tuple[dict[str, str], tuple[str, ...], bool, str]:
    """The round's candidate, its changed symbols, whether it came from the critic's own edits, and
    why the edits the critic attached were not used (empty when it attached none, or they were used).

    With ``merge = "one-issue"``, a critic whose one issue a signal backs may attach its fix; applied
    and gated, it stands in for the reviser's call (``policy.merge_refusal``; an issue only a failing
    test stands behind must be where the edits change the code, ``policy.covers``). Edits that do not
    apply or pass the gate are dropped and the reviser is asked as usual."""
    fail_on = run.settings.fail_on
    unused = ""
    if run.merge and critique.edits.strip():
        unused = merge_refusal(critique, current.comparison, texts, fail_on)
        if not unused:
            try:
                candidate, changed = run.merged(critique, texts)
            except RejectedEdit as exc:
                first = next((row for row in exc.feedback.splitlines() if row.strip()), exc.kind)
                unused = f"the critic's edits were not used, so the reviser was asked: {first.strip()}"
            else:
                issue = critique.issues[0]
                if name_backed(critique, current.comparison, texts, fail_on) or covers(
                    issue, texts, candidate
                ):
                    return candidate, changed, True, ""
                unused = (
                    "the critic's edits were not used, so the reviser was asked: they do not change the "
                    f"code of its issue at {issue.path}:{issue.line}, and no signal names it"
                )
    request = run.reviser_request(texts, critique, current.comparison)
    return (*run.edit(request, texts, number), False, unused)


def _ended(
    number: int,
    critique: Critique | None,
    comparison: Comparison,
    exc: BudgetExceededError | CritiqueError | RejectedEdit,
) -> tuple[RoundRecord, StopReason]:
    """The record of a round cut short (by the budget, an unusable critique or rejected edits) and the
    reason the run stops."""
    if isinstance(exc, BudgetExceededError):
        reason: Literal["budget", "timeout"] = "timeout" if isinstance(exc, TimeLimitError) else "budget"
        return RoundRecord(number, critique, reason, comparison, note=str(exc)), reason
    if isinstance(exc, CritiqueError):
        note = f"critique unusable: {exc}"
        return RoundRecord(number, None, "rejected", comparison, note=note), "no-progress"
    return RoundRecord(number, critique, exc.kind, comparison, note=exc.feedback), "no-progress"


def review(
    change: Change,
    settings: Settings,
    model: Model,
    evaluator: Evaluates,
    *,
    intent: str | None = None,
    clock: Callable[[], float] = time.monotonic,
    deadline: float | None = None,
    read_project: Callable[[str], str | None] | None = None,
    rules: ProjectRules | None = None,
) -> RefineResult:
    """Critique only: the signals and one critique of the change; nothing is revised or written."""
    prepare_gate()  # a verified fix goes through the gate
    run = Session(
        change,
        settings,
        model,
        evaluator,
        intent or settings.intent,
        NoProgress(),
        clock,
        deadline,
        read_project=read_project,
        rules=rules,
    )
    texts = dict(run.original)
    current = run.evaluate(texts, 0)
    run.localize(texts, current)
    try:
        critique = run.critique(texts, current, 1)
    except (BudgetExceededError, CritiqueError) as exc:
        record, reason = _ended(1, None, current.comparison, exc)
        return _result(run, texts, current, current, [record], reason, False, None)
    passed = blocking(current.comparison, settings.fail_on) == 0 and (
        critique.verdict == "pass" or not critique.issues
    )
    record = RoundRecord(1, critique, "passed" if passed else "reviewed", current.comparison)
    return _result(
        run, texts, current, current, [record], "passed" if passed else "reviewed", False, critique
    )


def _result(
    run: Session,
    texts: Mapping[str, str],
    initial: Evaluation,
    current: Evaluation,
    rounds: list[RoundRecord],
    stop: StopReason,
    drafted: bool,
    critique: Critique | None,
) -> RefineResult:
    return RefineResult(
        change=run.change,
        intent=run.intent,
        original=run.original,
        final=dict(texts),
        initial=initial,
        evaluation=current,
        rounds=tuple(rounds),
        stop=stop,
        usage=dict(run.ledger.usage),
        cost=run.ledger.cost,
        timings=dict(run.ledger.timings),
        spans=tuple(run.ledger.spans),
        drafted=drafted,
        critique=critique,
        charges=run.ledger.charges(),
        edit_format=run.edit_format,
        asks=run.asks,
        largest_call=run.ledger.largest_call,
        first_shown=run.first_shown or {},
    )
