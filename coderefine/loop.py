"""The self-refine loop, grounded in signals: critic -> reviser -> gate -> signals -> accept if no worse.

``refine(change, settings, model, evaluator, ...)`` is the engine behind every door. It never writes a
user's file: it returns a ``RefineResult`` whose ``final`` texts have passed the gate and whose signals
were measured in an isolated tree; the caller decides to write, show or publish them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal, Protocol

from coderefine.change import Change
from coderefine.config import Settings
from coderefine.context import FileView, named_spans, unseen_note, views_for
from coderefine.critique import Critique, CritiqueError, Issue, parse_critique
from coderefine.edits import EditError, apply_edits, parse_edit_blocks
from coderefine.errors import BudgetExceededError, TimeLimitError
from coderefine.evaluate import Evaluation
from coderefine.gate import run_gate
from coderefine.models.base import Block, Message, Model, ModelReply, ModelRequest, Role, Usage
from coderefine.policy import confirmed_by_signals
from coderefine.prices import cost_of
from coderefine.prompting import PromptBuilder, excerpt
from coderefine.redact import Redactor
from coderefine.signals.base import SEVERITY_RANK, Comparison
from coderefine.symbols import changed_symbols

StopReason = Literal["passed", "no-progress", "repeated", "rounds", "budget", "timeout", "gate", "reviewed"]
Outcome = Literal[
    "passed",
    "accepted",
    "rejected",
    "edit-failed",
    "gate-failed",
    "no-edits",
    "budget",
    "timeout",
    "reviewed",
]


class Evaluates(Protocol):
    """What the loop needs of ``evaluate.Evaluator``."""

    def evaluate(self, texts: Mapping[str, str]) -> Evaluation: ...


class Progress(Protocol):
    def phase(self, name: str, round_number: int, tokens: int) -> None: ...


class NoProgress:
    def phase(self, name: str, round_number: int, tokens: int) -> None:
        pass


@dataclass(frozen=True)
class RoundRecord:
    number: int
    critique: Critique | None
    outcome: Outcome
    before: Comparison
    after: Comparison | None = None
    changed: tuple[str, ...] = ()
    note: str = ""


@dataclass(frozen=True)
class ModelCharge:
    """Tokens and cost of one role on one model (a run with a model per role has one per role)."""

    role: str
    model: str
    usage: Usage
    cost: float


@dataclass(frozen=True)
class RefineResult:
    change: Change
    intent: str
    original: Mapping[str, str]
    final: Mapping[str, str]
    initial: Evaluation
    evaluation: Evaluation
    rounds: tuple[RoundRecord, ...]
    stop: StopReason
    usage: Mapping[str, Usage]
    cost: float
    timings: Mapping[str, float]
    drafted: bool = False
    critique: Critique | None = None
    charges: tuple[ModelCharge, ...] = ()

    @property
    def changed(self) -> bool:
        return dict(self.final) != dict(self.original)

    @property
    def total_usage(self) -> Usage:
        total = Usage()
        for usage in self.usage.values():
            total = total + usage
        return total

    def changed_paths(self) -> tuple[str, ...]:
        return tuple(p for p, text in self.final.items() if self.original.get(p) != text)


def redact_request(request: ModelRequest, redactor: Redactor) -> ModelRequest:
    """``request`` with every secret in its text replaced by a placeholder."""
    system = tuple(Block(redactor.redact(b.text), b.cache) for b in request.system)
    messages = tuple(
        Message(m.role, tuple(Block(redactor.redact(b.text), b.cache) for b in m.blocks))
        for m in request.messages
    )
    return dataclasses.replace(request, system=system, messages=messages)


def restore_reply(reply: ModelReply, redactor: Redactor) -> ModelReply:
    """``reply`` with the placeholders it quotes turned back into the secrets they stand for."""
    tool_input = redactor.restore_data(dict(reply.tool_input)) if reply.tool_input is not None else None
    return dataclasses.replace(reply, text=redactor.restore(reply.text), tool_input=tool_input)  # type: ignore[arg-type]


def blocking(comparison: Comparison, fail_on: str) -> int:
    """Introduced signals at or above ``fail_on`` (never 0 when a source is missing)."""
    if fail_on == "never":
        return 0
    floor = SEVERITY_RANK[fail_on]
    count = sum(1 for s in comparison.introduced if SEVERITY_RANK[s.severity] >= floor)
    return count + len(comparison.missing())


def no_worse(candidate: Comparison, current: Comparison) -> bool:
    """Whether the candidate's introduced signals weigh no more than the current ones, severity first
    (one failing test fewer outweighs a new lint warning), and no source went missing."""
    return candidate.weight() <= current.weight() and len(candidate.missing()) <= len(current.missing())


def _digest(texts: Mapping[str, str]) -> str:
    return hashlib.sha256("\0".join(f"{p}\0{t}" for p, t in sorted(texts.items())).encode()).hexdigest()


@dataclass
class Ledger:
    """Tokens, cost and time of a run (mutable; one per run, shared by the sessions of a review)."""

    settings: Settings
    clock: Callable[[], float]
    deadline: float | None = None
    usage: dict[str, Usage] = field(default_factory=dict)
    cost: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)
    by_model: dict[tuple[str, str], ModelCharge] = field(default_factory=dict)

    def tokens(self) -> int:
        return sum(u.total for u in self.usage.values())

    def charge(self, role: Role, reply: ModelReply) -> None:
        self.usage[role] = self.usage.get(role, Usage()) + reply.usage
        cost = cost_of(reply.model, reply.usage, self.settings.prices, batch=reply.batch)
        self.cost += cost
        # A batch call is its own line of the report, so the discounted price is seen as such.
        label = f"{reply.model} (batch)" if reply.batch else reply.model
        old = self.by_model.get((role, label), ModelCharge(role, label, Usage(), 0.0))
        self.by_model[(role, label)] = ModelCharge(role, label, old.usage + reply.usage, old.cost + cost)

    def charges(self) -> tuple[ModelCharge, ...]:
        return tuple(self.by_model.values())

    def allow(self, request: ModelRequest) -> None:
        """Refuse a call that could take the run past its token, cost or time budget."""
        if self.deadline is not None and self.clock() >= self.deadline:
            raise TimeLimitError("the time limit was reached")
        estimate = len(request.prompt_text()) // 3 + request.max_tokens
        max_tokens, max_cost = self.settings.max_tokens, self.settings.max_cost
        if max_tokens and self.tokens() + estimate > max_tokens:
            raise BudgetExceededError(f"token budget of {max_tokens} reached ({self.tokens()} used)")
        if max_cost and self.cost >= max_cost:
            raise BudgetExceededError(f"cost budget of ${max_cost:.2f} reached (${self.cost:.2f} used)")

    def time(self, phase: str, start: float) -> None:
        self.timings[phase] = self.timings.get(phase, 0.0) + self.clock() - start


class Session:
    """The calls of one run on one change: critique, edit (with one retry), evaluate; all charged to the
    run's ledger."""

    def __init__(
        self,
        change: Change,
        settings: Settings,
        model: Model,
        evaluator: Evaluates,
        intent: str,
        progress: Progress,
        clock: Callable[[], float],
        deadline: float | None = None,
        ledger: Ledger | None = None,
    ) -> None:
        self.change = change
        self.settings = settings
        self.model = model
        self.evaluator = evaluator
        self.intent = intent
        self.progress = progress
        self.ledger = ledger or Ledger(settings, clock, deadline)
        self.prompts = PromptBuilder(settings.max_output_tokens)
        self.allowed = list(change.paths)
        self.redactor = Redactor()
        self.original = {f.path: f.after.text for f in change.files}
        self.before = {f.path: f.before.text for f in change.files if f.before is not None}
        self.shown: dict[str, FileView] = {}

    def views(self, texts: Mapping[str, str], comparison: Comparison) -> dict[str, FileView]:
        """What the next requests show of each file (whole when small; see ``context``). The critic
        and the reviser of a round get the same views, so they share one cached prefix."""
        self.shown = views_for(texts, self.before, comparison.introduced, self.settings.context_lines)
        return self.shown

    def call(self, request: ModelRequest, round_number: int) -> ModelReply:
        """One model call: within the budget, with secrets redacted out and restored in the answer."""
        self.ledger.allow(request)
        self.progress.phase(request.role, round_number, self.ledger.tokens())
        start = self.ledger.clock()
        reply = self.model.complete(redact_request(request, self.redactor))
        self.ledger.time(request.role, start)
        self.ledger.charge(request.role, reply)
        return restore_reply(reply, self.redactor)

    def evaluate(self, texts: Mapping[str, str], round_number: int) -> Evaluation:
        self.progress.phase("signals", round_number, self.ledger.tokens())
        start = self.ledger.clock()
        evaluation = self.evaluator.evaluate(texts)
        self.ledger.time("signals", start)
        return evaluation

    def critique(self, texts: Mapping[str, str], current: Evaluation, round_number: int) -> Critique:
        diff = _diff(self.before, texts)
        changed = sorted({n for p, t in texts.items() for n in changed_symbols(self.before.get(p, ""), t)})
        request = self.prompts.critic(
            texts,
            intent=self.intent,
            diff=diff,
            changed=changed,
            comparison=current.comparison,
            views=self.views(texts, current.comparison),
        )
        reply = self.call(request, round_number)
        try:
            return parse_critique(reply.tool_input, reply.text, texts)
        except CritiqueError as exc:
            retry = self.prompts.retry(request, reply.text, "critique_retry", str(exc) + _why(reply))
            reply = self.call(retry, round_number)
            try:
                return parse_critique(reply.tool_input, reply.text, texts)
            except CritiqueError as again:
                raise CritiqueError(str(again) + _why(reply)) from again

    def edit(
        self, request: ModelRequest, texts: Mapping[str, str], round_number: int
    ) -> tuple[dict[str, str], tuple[str, ...]]:
        """Ask for edit blocks, apply and gate them; once more with the exact error if that fails."""
        for attempt in (1, 2):
            reply = self.call(request, round_number)
            start = self.ledger.clock()
            try:
                return self._apply(reply.text, texts)
            except RejectedEdit as exc:
                if attempt == 2:
                    raise RejectedEdit(exc.kind, exc.feedback + _why(reply)) from exc
                request = self.prompts.retry(request, reply.text, "retry", exc.feedback + _why(reply))
            finally:
                self.ledger.time("gate", start)
        raise AssertionError("unreachable")

    def _apply(self, reply: str, texts: Mapping[str, str]) -> tuple[dict[str, str], tuple[str, ...]]:
        default = self.allowed[0] if len(self.allowed) == 1 else None
        try:
            blocks = parse_edit_blocks(reply, default_path=default)
            changed = apply_edits(texts, blocks, self.allowed)
        except EditError as exc:
            raise RejectedEdit("edit-failed", exc.feedback() + self._unseen(reply)) from exc
        gate = run_gate(changed, texts, root=self.change.root, allowed=self.allowed)
        if not gate.ok:
            raise RejectedEdit("gate-failed", "The edited code does not pass the gate:\n" + gate.feedback())
        return {**texts, **changed}, gate.changed

    def _unseen(self, reply: str) -> str:
        """For a file shown in part: say so, and show the hidden definitions the reply tried to edit."""
        note = unseen_note(self.shown)
        if not note:
            return ""
        spans = [excerpt(v, span) for v in self.shown.values() for span in named_spans(v, reply)]
        return "\n\n" + note + ("\n\n" + "\n\n".join(spans) if spans else "")


def _why(reply: ModelReply) -> str:
    """What the provider said about an unusable answer: cut at the token limit, empty, thoughts only."""
    if reply.stop_reason == "max_tokens":
        return " (the answer was cut off at the output token limit: answer shorter)"
    if not reply.text.strip() and reply.tool_input is None:
        return " (the answer was empty" + (
            ": only reasoning, no answer)" if reply.stop_reason == "reasoning-only" else ")"
        )
    return ""


class RejectedEdit(Exception):
    """The model's edit blocks could not be applied, or their result failed the gate."""

    def __init__(self, kind: Literal["edit-failed", "gate-failed"], feedback: str) -> None:
        super().__init__(feedback)
        self.kind = kind
        self.feedback = feedback


def _diff(before: Mapping[str, str], after: Mapping[str, str]) -> str:
    import difflib

    parts: list[str] = []
    for path, text in after.items():
        old = before.get(path)
        if old is None:
            continue
        parts.extend(
            difflib.unified_diff(
                old.splitlines(keepends=True), text.splitlines(keepends=True), f"a/{path}", f"b/{path}"
            )
        )
    return "".join(parts)


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
) -> RefineResult:
    """Refine ``change`` with ``model`` for at most ``settings.rounds`` rounds; keep the best candidate.

    With ``draft``, the author first writes the change from the intent (the files may be empty). No model
    call starts after ``deadline`` (a ``clock()`` value); the run then stops with reason "timeout".
    ``max_rounds`` overrides the setting (0: the author's draft only); without ``use_critic`` each round's
    critique is made from the signals alone (an ablation of the benchmark). With ``retry_worse`` a
    candidate that makes a signal worse does not end the run: the next round's reviser is told what got
    worse (Self-Refine's retry), within the round budget.
    """
    run = Session(
        change,
        settings,
        model,
        evaluator,
        intent or settings.intent,
        progress or NoProgress(),
        clock,
        deadline,
    )
    texts = dict(run.original)
    initial = current = run.evaluate(texts, 0)
    rounds: list[RoundRecord] = []
    seen = {_digest(texts)}
    stop: StopReason = "rounds"
    drafted = False
    last_critique: Critique | None = None

    if draft:
        try:
            request = run.prompts.author(texts, intent=run.intent)
            candidate, changed = run.edit(request, texts, 0)
        except BudgetExceededError as exc:
            reason = _budget_reason(exc)
            rounds.append(RoundRecord(0, None, reason, current.comparison, note=str(exc)))
            return _result(run, texts, initial, current, rounds, reason, drafted, None)
        except RejectedEdit as exc:
            rounds.append(RoundRecord(0, None, exc.kind, current.comparison, note=exc.feedback))
            return _result(run, texts, initial, current, rounds, "gate", drafted, None)
        evaluation = run.evaluate(candidate, 0)
        rounds.append(
            RoundRecord(0, None, "accepted", current.comparison, evaluation.comparison, changed, "drafted")
        )
        texts, current, drafted = candidate, evaluation, True
        seen.add(_digest(texts))

    worse: Critique | None = None
    for number in range(1, (settings.rounds if max_rounds is None else max_rounds) + 1):
        # first-critique = "signals": when the tools already name what is wrong, the first round's
        # critique is made of those signals, and the critic's first call is saved.
        from_signals = not use_critic or (
            number == 1
            and settings.first_critique == "signals"
            and blocking(current.comparison, settings.fail_on) > 0
            and not current.comparison.missing()
        )
        try:
            if worse is not None:
                critique, worse = worse, None
            elif from_signals:
                critique = signal_critique(current.comparison)
            else:
                critique = run.critique(texts, current, number)
        except BudgetExceededError as exc:
            stop = _budget_reason(exc)
            rounds.append(RoundRecord(number, None, stop, current.comparison, note=str(exc)))
            break
        except CritiqueError as exc:
            rounds.append(
                RoundRecord(number, None, "rejected", current.comparison, note=f"critique unusable: {exc}")
            )
            stop = "no-progress"
            break
        last_critique = critique
        clean = blocking(current.comparison, settings.fail_on) == 0
        if clean and (critique.verdict == "pass" or not critique.issues):
            rounds.append(RoundRecord(number, critique, "passed", current.comparison))
            stop = "passed"
            break
        try:
            request = run.prompts.reviser(
                texts,
                intent=run.intent,
                critique=critique,
                comparison=current.comparison,
                views=run.views(texts, current.comparison),
            )
            candidate, changed = run.edit(request, texts, number)
        except BudgetExceededError as exc:
            stop = _budget_reason(exc)
            rounds.append(RoundRecord(number, critique, stop, current.comparison, note=str(exc)))
            break
        except RejectedEdit as exc:
            rounds.append(RoundRecord(number, critique, exc.kind, current.comparison, note=exc.feedback))
            stop = "no-progress"
            break
        if candidate == texts:
            rounds.append(
                RoundRecord(
                    number, critique, "no-edits", current.comparison, note="the reviser changed nothing"
                )
            )
            stop = "no-progress"
            break
        digest = _digest(candidate)
        if digest in seen:
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
        seen.add(digest)
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
                    "a signal got worse; the candidate was discarded",
                )
            )
            if retry_worse:
                worse = worse_critique(evaluation.comparison, current.comparison)
                continue
            stop = "no-progress"
            break
        resolved = settings.confirm == "signals" and confirmed_by_signals(
            critique, current.comparison, evaluation.comparison, texts, settings.fail_on
        )
        note = "the signals behind every issue are resolved: no confirming critique" if resolved else ""
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


def worse_critique(candidate: Comparison, current: Comparison) -> Critique:
    """What a discarded candidate made worse, as the critique of the next revision."""
    before = {(s.path, s.code, s.message) for s in current.introduced}
    issues = tuple(
        Issue(
            title=f"your last revision was discarded: it introduced {s.code}: {s.message}"[:200],
            severity=s.severity,
            path=s.path,
            line=s.line,
            end_line=s.end_line,
            evidence=s.anchor or s.detail[-500:],
            suggestion="revise again from the current files without introducing this",
        )
        for s in candidate.introduced
        if (s.path, s.code, s.message) not in before
    )
    return Critique("revise", "the last revision made a signal worse and was discarded", issues)


def signal_critique(comparison: Comparison) -> Critique:
    """A critique made of the introduced signals alone: what the reviser sees when there is no critic."""
    issues = tuple(
        Issue(
            title=f"{s.code}: {s.message}"[:200],
            severity=s.severity,
            path=s.path,
            line=s.line,
            end_line=s.end_line,
            evidence=s.anchor or s.detail[-500:],
            suggestion="make this signal go away without changing intended behaviour",
        )
        for s in comparison.introduced
        if s.severity != "info"
    )
    return Critique("revise" if issues else "pass", "the signals of the current code", issues)


def _budget_reason(exc: BudgetExceededError) -> Literal["budget", "timeout"]:
    return "timeout" if isinstance(exc, TimeLimitError) else "budget"


def review(
    change: Change,
    settings: Settings,
    model: Model,
    evaluator: Evaluates,
    *,
    intent: str | None = None,
    clock: Callable[[], float] = time.monotonic,
    deadline: float | None = None,
) -> RefineResult:
    """Critique only: the signals and one critique of the change; nothing is revised or written."""
    run = Session(
        change, settings, model, evaluator, intent or settings.intent, NoProgress(), clock, deadline
    )
    texts = dict(run.original)
    current = run.evaluate(texts, 0)
    try:
        critique = run.critique(texts, current, 1)
    except BudgetExceededError as exc:
        reason = _budget_reason(exc)
        record = RoundRecord(1, None, reason, current.comparison, note=str(exc))
        return _result(run, texts, current, current, [record], reason, False, None)
    except CritiqueError as exc:
        record = RoundRecord(1, None, "rejected", current.comparison, note=f"critique unusable: {exc}")
        return _result(run, texts, current, current, [record], "no-progress", False, None)
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
        drafted=drafted,
        critique=critique,
        charges=run.ledger.charges(),
    )
