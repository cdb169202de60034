"""The calls of one run: each model call within the run's budget (secrets redacted out and restored in),
critique with its one retry, edit blocks applied and gated with their one retry, and signals measured."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Literal, Protocol

from coderefine.config import Settings
from coderefine.edits.blocks import EditError
from coderefine.edits.formats import apply_reply, choose_format
from coderefine.edits.gate import run_gate
from coderefine.edits.symbols import changed_symbols
from coderefine.models.base import Block, Message, Model, ModelReply, ModelRequest, Role, ready
from coderefine.models.roles import role_specs
from coderefine.project.change import Change
from coderefine.project.redact import Redactor
from coderefine.project.rules import disk_reader
from coderefine.refiner.asks import MAX_ASKS, Ask, asks_in, named
from coderefine.refiner.budget import UNBOUNDED_ASK_CHARS, request_budget
from coderefine.refiner.code_section import excerpt
from coderefine.refiner.context import FileView, named_spans, unseen_note
from coderefine.refiner.critique import Critique, CritiqueError, asked_names, parse_critique
from coderefine.refiner.follow_up import answered, retry_within, why
from coderefine.refiner.ledger import Ledger
from coderefine.refiner.localize import Localization, localize
from coderefine.refiner.prompting import EDIT_RETRY, PromptBuilder
from coderefine.refiner.rules import ProjectRules
from coderefine.refiner.sections import fence
from coderefine.refiner.showing import Showing, change_diff, is_test_failure
from coderefine.refiner.spec import CHARS_PER_TOKEN, SpecSource, project_reader
from coderefine.signals.base import Comparison
from coderefine.signals.evaluate import Evaluation
from coderefine.signals.test_source import TestSources


class Evaluates(Protocol):
    """What the loop needs of ``evaluate.Evaluator``."""

    def evaluate(self, texts: Mapping[str, str]) -> Evaluation: ...


class Progress(Protocol):
    def phase(self, name: str, round_number: int, tokens: int) -> None: ...


class NoProgress:
    def phase(self, name: str, round_number: int, tokens: int) -> None:
        pass


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
        merge: bool = False,
        spec_tests: Sequence[str] = (),
        read_project: Callable[[str], str | None] | None = None,
        rules: ProjectRules | None = None,
    ) -> None:
        """``spec_tests``: the tests whose source the author is shown when no signal says which fail
        (the bench's one-shot, which runs none). ``read_project``: the project's other files by relative
        path, as the tests run them (the git index for a staged change); the disk by default. ``rules``: the
        project's rules the critic is given (read from the disk by default; a review's and the hook's come
        from a version the change cannot have written)."""
        self.change = change
        self.settings = settings
        self.model = model
        self.evaluator = evaluator
        self.intent = intent
        self.progress = progress
        self.ledger = ledger or Ledger(settings, clock, deadline)
        self.edit_format = choose_format(settings.edit_format, settings.reviser_model or settings.model)
        # The critic's attached edits are SEARCH/REPLACE blocks (the merged schema says so): another format
        # has no merged critique.
        self.merge = merge and self.edit_format == "search-replace"
        readers = role_specs(settings)
        # Every size in the run's requests, decided once (budget.py).
        self.budget = request_budget(settings)
        self.prompts = PromptBuilder(
            settings.max_output_tokens,
            merge=self.merge,
            edit_format=self.edit_format,
            signal_tokens=self.budget.signal_tokens,
            spec=self._spec_source(settings, readers, spec_tests, read_project),
            request_chars=self.budget.request_chars,
        )
        self.rules = rules or ProjectRules(settings, disk_reader(change.root))
        self.prompts.rules = lambda paths: self.rules.section(paths, fence, self.budget.rules_tokens).text
        self.allowed = list(change.paths)
        self.redactor = Redactor()
        self.original = {f.path: f.after.text for f in change.files}
        self.before = {f.path: f.before.text for f in change.files if f.before is not None}
        self.showing = Showing(
            original=self.original,
            before=self.before,
            intent=intent,
            edit_format=self.edit_format,
            context_lines=settings.context_lines,
            budget=self.budget,
            spec=self.prompts.spec,
        )
        self._ready = False
        self.asks = 0  # answers that asked to see definitions, and were shown them (asks.py)
        # What the first request showed of each file (excerpts; () for whole): the bench's `localized`.
        self.first_shown: dict[str, tuple[tuple[int, int], ...]] | None = None
        self._read = read_project or project_reader(change.root, {})

    @property
    def shown(self) -> dict[str, FileView]:
        """What the last request showed of each file."""
        return self.showing.shown

    def _spec_source(
        self,
        settings: Settings,
        readers: Mapping[Role, str],
        tests: Sequence[str],
        read_project: Callable[[str], str | None] | None,
    ) -> SpecSource | None:
        if not settings.tests and not tests:
            return None
        reader = read_project or project_reader(self.change.root, {})
        under_review = [f.path for f in self.change.files]
        return SpecSource(
            TestSources(reader, exclude=under_review), self.budget.spec_tokens * CHARS_PER_TOKEN, tests
        )

    def localize(self, texts: Mapping[str, str], evaluation: Evaluation) -> Localization | None:
        """Once per run, when the change's tests fail: run the failing tests' files again, recording
        the functions each test calls, and rank the definitions by how strongly the failing tests
        point at them (``localize.py``). The price is one more run of those test files, with a profile
        hook, and only when tests fail; an evaluator that cannot record calls gives no ranking."""
        files = sorted(
            {s.code.split("::")[0] for s in evaluation.comparison.introduced if is_test_failure(s)}
        )
        record = getattr(self.evaluator, "test_calls", None)
        if self.showing.localization is not None or not files or not callable(record):
            return self.showing.localization
        self.progress.phase("signals", 0, self.ledger.tokens())
        start = self.ledger.clock()
        runs = record(texts, files)
        self.ledger.time("signals", start, "localize: the failing tests' calls")
        self.showing.localization = self.prompts.localization = localize(runs, self._read, list(texts), texts)
        return self.showing.localization

    def author_request(self, texts: Mapping[str, str], comparison: Comparison) -> ModelRequest:
        """The author's request for ``texts``, shown the failing tests of ``comparison``."""
        return self.prompts.author(
            texts,
            intent=self.intent,
            failing=comparison.introduced,
            views=self.showing.author_views(texts, comparison),
        )

    def reviser_request(
        self,
        texts: Mapping[str, str],
        critique: Critique,
        comparison: Comparison,
        fix: Sequence[int] | None = None,
    ) -> ModelRequest:
        """The reviser's request: the round's views, and the lines the critique names that they leave
        out within what the views leave of the code budget."""
        views = self.showing.views(texts, comparison)
        return self.prompts.reviser(
            texts,
            intent=self.intent,
            critique=critique,
            comparison=comparison,
            views=views,
            fix=fix,
            room=self.showing.code_room(),
        )

    def call(self, request: ModelRequest, round_number: int) -> ModelReply:
        """One model call: within the budget, with secrets redacted out and restored in the answer."""
        self.ledger.allow(request)
        if self.first_shown is None:
            views = {p: self.shown.get(p) for p in self.original}
            self.first_shown = {p: v.excerpts if v is not None else () for p, v in views.items()}
        self.progress.phase(request.role, round_number, self.ledger.tokens())
        if not self._ready:
            # The first call waits for the SDK's import and client (begun in the background at the
            # start): a phase of its own, so a call's time is the call's.
            start = self.ledger.clock()
            ready(self.model)
            self.ledger.span("model SDK (waited for)", start)
            self._ready = True
        start = self.ledger.clock()
        reply = self.model.complete(redact_request(request, self.redactor))
        self.ledger.time(request.role, start, f"{request.role} call")
        self.ledger.charge(request.role, reply)
        return restore_reply(reply, self.redactor)

    def evaluate(self, texts: Mapping[str, str], round_number: int) -> Evaluation:
        self.progress.phase("signals", round_number, self.ledger.tokens())
        start = self.ledger.clock()
        evaluation = self.evaluator.evaluate(texts)
        self.ledger.time("signals", start)
        return evaluation

    def critique(self, texts: Mapping[str, str], current: Evaluation, round_number: int) -> Critique:
        diff = change_diff(self.before, texts)
        # A file with no version before the change is under review whole: naming every one of its
        # functions as "touched" said nothing and cost a line per definition.
        changed = sorted(
            {n for p, t in texts.items() if p in self.before for n in changed_symbols(self.before[p], t)}
        )
        request = self.prompts.critic(
            texts,
            intent=self.intent,
            diff=diff,
            changed=changed,
            whole=[p for p in texts if p not in self.before],
            comparison=current.comparison,
            views=self.showing.views(texts, current.comparison, diff),
        )
        request, reply = self._critic_reply(request, texts, round_number)
        try:
            return self.rules.cite(parse_critique(reply.tool_input, reply.text, texts), texts)
        except CritiqueError as exc:
            retry = self._retry(request, reply.text, "critique_retry", str(exc) + why(reply))
            reply = self.call(retry, round_number)
            try:
                return self.rules.cite(parse_critique(reply.tool_input, reply.text, texts), texts)
            except CritiqueError as again:
                raise CritiqueError(str(again) + why(reply)) from again

    def _critic_reply(
        self, request: ModelRequest, texts: Mapping[str, str], round_number: int
    ) -> tuple[ModelRequest, ModelReply]:
        """The critic's answer, once the definitions it asked to see (``show``, or ``SHOW:`` lines) are
        shown to it, at most ``MAX_ASKS`` times; only while some file is shown in part."""
        reply = self.call(request, round_number)
        for left in range(MAX_ASKS, 0, -1):
            if all(v.whole for v in self.shown.values()):
                break
            asked = named(asked_names(reply.tool_input, reply.text)) or asks_in(reply.text)
            if not asked:
                break
            said = reply.text if reply.text.strip() else json.dumps(reply.tool_input, ensure_ascii=False)
            request = self._answer(request, said, texts, asked, last=left == 1)
            reply = self.call(request, round_number)
        return request, reply

    def edit(
        self, request: ModelRequest, texts: Mapping[str, str], round_number: int
    ) -> tuple[dict[str, str], tuple[str, ...]]:
        """Ask for edit blocks, apply and gate them; once more with the exact error if that fails. An
        answer that only asks to see definitions (``asks.py``) is answered with them first."""
        asks = MAX_ASKS
        for attempt in (1, 2):
            reply = self.call(request, round_number)
            while asks and asks_in(reply.text):
                asks -= 1
                request = self._answer(request, reply.text, texts, last=asks == 0)
                reply = self.call(request, round_number)
            start = self.ledger.clock()
            try:
                return self._apply(reply.text, texts, cut_off=reply.stop_reason == "max_tokens")
            except RejectedEdit as exc:
                if attempt == 2:
                    raise RejectedEdit(exc.kind, exc.feedback + why(reply)) from exc
                request = self._retry(
                    request, reply.text, EDIT_RETRY[self.edit_format], exc.feedback + why(reply)
                )
            finally:
                self.ledger.time("gate", start)
        raise AssertionError("unreachable")

    def _answer(
        self,
        request: ModelRequest,
        reply_text: str,
        texts: Mapping[str, str],
        asked: list[Ask] | None = None,
        last: bool = False,
    ) -> ModelRequest:
        """``request`` continued with the definitions the model asked for (``follow_up.answered``),
        within what the views leave of the code budget; counted in ``asks``."""
        self.asks += 1
        room = self.showing.code_room() or UNBOUNDED_ASK_CHARS
        return answered(request, reply_text, texts, self.shown, room, asked, last)

    def _retry(self, request: ModelRequest, reply_text: str, template: str, feedback: str) -> ModelRequest:
        return retry_within(self.prompts, request, reply_text, template, feedback, self.budget.prompt_chars)

    def merged(self, critique: Critique, texts: Mapping[str, str]) -> tuple[dict[str, str], tuple[str, ...]]:
        """The critic's attached edits applied and gated, as a reviser's would be (no call, no retry:
        when they fail, the caller asks the reviser)."""
        start = self.ledger.clock()
        try:
            return self._apply(critique.edits, texts)
        finally:
            self.ledger.time("gate", start)

    def _apply(
        self, reply: str, texts: Mapping[str, str], *, cut_off: bool = False
    ) -> tuple[dict[str, str], tuple[str, ...]]:
        default = self.allowed[0] if len(self.allowed) == 1 else None
        try:
            changed = apply_reply(
                self.edit_format, reply, texts, self.allowed, default_path=default, cut_off=cut_off
            )
        except EditError as exc:
            raise RejectedEdit("edit-failed", exc.feedback() + self._unseen(reply)) from exc
        # The candidate's tests start as soon as it can run (paths allowed, every file compiles), while
        # libcst's parse and the changed symbols are checked.
        start = getattr(self.evaluator, "start", None)
        candidate = {**texts, **changed}
        gate = run_gate(
            changed,
            texts,
            root=self.change.root,
            allowed=self.allowed,
            on_runnable=(lambda: start(candidate)) if callable(start) else None,
        )
        if not gate.ok:
            raise RejectedEdit("gate-failed", "The edited code does not pass the gate:\n" + gate.feedback())
        return {**texts, **changed}, gate.changed

    def _unseen(self, reply: str) -> str:
        """For a file shown in part: say so, and show the hidden definitions the reply tried to edit."""
        note = unseen_note(self.shown, self.edit_format)
        if not note:
            return ""
        spans = [excerpt(v, span) for v in self.shown.values() for span in named_spans(v, reply)]
        return "\n\n" + note + ("\n\n" + "\n\n".join(spans) if spans else "")


class RejectedEdit(Exception):
    """The model's edit blocks could not be applied, or their result failed the gate."""

    def __init__(self, kind: Literal["edit-failed", "gate-failed"], feedback: str) -> None:
        super().__init__(feedback)
        self.kind = kind
        self.feedback = feedback
