"""The calls of one run: each model call within the run's budget (secrets redacted out and restored in),
critique with its one retry, edit blocks applied and gated with their one retry, and signals measured."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Literal, Protocol

from coderefine.config import Settings
from coderefine.edits.blocks import EditError
from coderefine.edits.formats import apply_reply, choose_format
from coderefine.edits.gate import run_gate
from coderefine.edits.symbols import changed_symbols
from coderefine.models.base import Block, Message, Model, ModelReply, ModelRequest, Role, ready
from coderefine.models.roles import role_specs
from coderefine.models.windows import DIFF_ALLOWANCE, FLOOR, prompt_limit, signal_budget, view_budget
from coderefine.project.change import Change
from coderefine.project.redact import Redactor
from coderefine.project.rules import disk_reader
from coderefine.refiner.asks import MAX_ASKS, answer, asks_in
from coderefine.refiner.code_section import excerpt
from coderefine.refiner.context import FileView, fit_views, named_spans, unseen_note, views_for
from coderefine.refiner.critique import Critique, CritiqueError, parse_critique
from coderefine.refiner.ledger import Ledger
from coderefine.refiner.localize import Localization, localize
from coderefine.refiner.prompting import EDIT_RETRY, MAX_ECHO, PromptBuilder, prompt_text
from coderefine.refiner.rules import ProjectRules
from coderefine.refiner.sections import fence
from coderefine.refiner.spec import CHARS_PER_TOKEN, SpecSource, project_reader
from coderefine.signals.base import Comparison, Signal, touched_lines
from coderefine.signals.evaluate import Evaluation
from coderefine.signals.test_source import TestSources

# What a retry keeps however little room its context leaves: the error's first lines, and an echo of the
# failed answer only when this much of it fits (less says nothing the error does not).
MIN_FEEDBACK = 600
MIN_ECHO = 400
ASK_CHARS = 8_000  # what the definitions a model asked for may take when no view budget is known


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
        signal_tokens = signal_budget(
            settings.signal_tokens,
            "signal_tokens" in settings.sources,
            # The roles whose requests carry the signals: the author's never do.
            (readers["critic"], readers["reviser"]),
        )
        self.prompts = PromptBuilder(
            settings.max_output_tokens,
            merge=self.merge,
            edit_format=self.edit_format,
            signal_tokens=signal_tokens,
            spec=self._spec_source(settings, readers, spec_tests, read_project),
        )
        self.rules = rules or ProjectRules(settings, disk_reader(change.root))
        # Scaled with the critic's context like the signals' budget: 1,000 tokens of rules in a gguf:
        # model's 8k window leave the file too little room.
        rules_tokens = signal_budget(
            self.rules.tokens, "rules_tokens" in settings.sources, (readers["critic"],)
        )
        self.prompts.rules = lambda paths: self.rules.section(paths, fence, rules_tokens).text
        models = (readers["author"], readers["critic"], readers["reviser"])
        spec_tokens = signal_budget(settings.spec_tokens, "spec_tokens" in settings.sources, models)
        fitted = view_budget(
            models,
            settings.max_output_tokens,
            "max_output_tokens" in settings.sources,
            signal_tokens + spec_tokens,
        )
        # The smaller of what the window leaves and the view budget (``view-tokens``; 0: the window's).
        sizes = [t for t in (fitted, settings.view_tokens or None) if t is not None]
        self._view_chars = min(sizes) * CHARS_PER_TOKEN if sizes else None
        # The author writes from the intent, with no critique to point it anywhere: only the window
        # bounds its views (a one-shot shown excerpts of a module with two bugs missed the one it hid).
        self._window_chars = fitted * CHARS_PER_TOKEN if fitted is not None else None
        limit = prompt_limit(models, settings.max_output_tokens, "max_output_tokens" in settings.sources)
        # A tenth less than four characters a token: a request of diffs and tracebacks counted 7,324
        # tokens in Qwen's tokenizer where len/4 said 7,168.
        self._prompt_chars = limit * CHARS_PER_TOKEN * 9 // 10 if limit is not None else None
        self.allowed = list(change.paths)
        self.redactor = Redactor()
        self.original = {f.path: f.after.text for f in change.files}
        self.before = {f.path: f.before.text for f in change.files if f.before is not None}
        self.shown: dict[str, FileView] = {}
        self._ready = False
        self.asks = 0  # answers that asked to see definitions, and were shown them (asks.py)
        # What the first request showed of each file (excerpts; () for whole): the bench's `localized`.
        self.first_shown: dict[str, tuple[tuple[int, int], ...]] | None = None
        self._read = read_project or project_reader(change.root, {})
        # Where the failing tests point (``localize``): None until tests fail and their calls are known.
        self.localization: Localization | None = None

    def _spec_source(
        self,
        settings: Settings,
        readers: Mapping[Role, str],
        tests: Sequence[str],
        read_project: Callable[[str], str | None] | None,
    ) -> SpecSource | None:
        # The budget scales with the smallest context among the roles that are shown the spec, like
        # the signals' budget; 0 tokens chosen by the user means no limit, as there.
        tokens = signal_budget(
            settings.spec_tokens,
            "spec_tokens" in settings.sources,
            (readers["author"], readers["critic"], readers["reviser"]),
        )
        if not settings.tests and not tests:
            return None
        reader = read_project or project_reader(self.change.root, {})
        under_review = [f.path for f in self.change.files]
        return SpecSource(TestSources(reader, exclude=under_review), tokens * CHARS_PER_TOKEN, tests)

    def localize(self, texts: Mapping[str, str], evaluation: Evaluation) -> Localization | None:
        """Once per run, when the change's tests fail: run the failing tests' files again, recording
        the functions each test calls, and rank the definitions by how strongly the failing tests
        point at them (``localize.py``). The price is one more run of those test files, with a profile
        hook, and only when tests fail; an evaluator that cannot record calls gives no ranking."""
        files = sorted(
            {s.code.split("::")[0] for s in evaluation.comparison.introduced if _is_test_failure(s)}
        )
        record = getattr(self.evaluator, "test_calls", None)
        if self.localization is not None or not files or not callable(record):
            return self.localization
        self.progress.phase("signals", 0, self.ledger.tokens())
        start = self.ledger.clock()
        runs = record(texts, files)
        self.ledger.time("signals", start, "localize: the failing tests' calls")
        self.localization = localize(runs, self._read, list(texts), texts)
        self.prompts.localization = self.localization
        return self.localization

    def _located(self, texts: Mapping[str, str], comparison: Comparison) -> dict[str, frozenset[int]]:
        """The lines of the definitions the failing tests point at, while tests still fail."""
        failing = any(_is_test_failure(s) for s in comparison.introduced)
        return self.localization.lines(texts) if self.localization is not None and failing else {}

    def views(
        self, texts: Mapping[str, str], comparison: Comparison, diff: str | None = None
    ) -> dict[str, FileView]:
        """What the next requests show of each file (whole when small; see ``context``). The critic
        and the reviser of a round get the same views, so they share one cached prefix. The lines
        this run rewrote stay in focus too: a revision that undid the whole change leaves no diff and no
        signal, and the critic confirming it was shown all of a 2,700-line file. ``diff``: the change's
        diff when the caller has it already (else it is made here, to count against the window)."""
        if self.edit_format == "whole":
            # The model answers with every line of each file: it must be shown every line.
            self.shown = {p: FileView(p, t) for p, t in texts.items()}
            return self.shown
        rewritten = {
            p: touched_lines(self.original[p], t)
            for p, t in texts.items()
            if p in self.original and t != self.original[p]
        }
        # The definitions the failing tests point at are shown whole (without their neighbours: each is
        # a candidate, not a change), beside the change's own lines, while tests fail.
        located = self._located(texts, comparison)
        focused: dict[str, Iterable[int]] = {p: set(rewritten.get(p, ())) for p in texts}
        views = views_for(
            texts, self.before, comparison.introduced, self.settings.context_lines, focused, plain=located
        )
        spec = self.prompts.spec
        partial = {p: t for p, t in texts.items() if not views[p].whole}
        if spec is not None and partial:
            # A file shown in part keeps in view the definitions the failing tests call: when the tests
            # are the spec, the code they exercise is what must change, wherever the traceback ends. A
            # file shown whole stays whole: focusing it on those definitions would hide the helpers
            # they reach, which the tests' text does not name.
            focus = {p: frozenset(lines) for p, lines in focused.items()}
            for path, lines in spec.focus(partial, comparison.introduced).items():
                focus[path] = focus.get(path, frozenset()) | lines
            views.update(
                views_for(
                    partial,
                    self.before,
                    comparison.introduced,
                    self.settings.context_lines,
                    focus,
                    plain=located,
                )
            )
        # The critic's and the reviser's requests carry the intent and the diff beside the views.
        beside = len(self.intent) + len(_diff(self.before, texts) if diff is None else diff)
        self.shown = self._fitted(views, texts, comparison, rewritten, self._view_chars, beside)
        return self.shown

    def author_views(self, texts: Mapping[str, str], comparison: Comparison) -> dict[str, FileView] | None:
        """The author's views: None (every file whole), unless that would not fit the model's context
        (never in ``whole`` format, whose answer is every line of each file)."""
        whole = {p: FileView(p, t) for p, t in texts.items()}
        fitted = (
            whole
            if self.edit_format == "whole"
            else self._fitted(whole, texts, comparison, {}, self._window_chars)
        )
        self.shown = fitted  # so that a retry says which parts the author was not shown
        return None if fitted == whole else fitted

    def _fitted(
        self,
        views: dict[str, FileView],
        texts: Mapping[str, str],
        comparison: Comparison,
        rewritten: Mapping[str, Iterable[int]],
        chars: int | None,
        beside: int = 0,
    ) -> dict[str, FileView]:
        """``views``, or excerpts that fit ``chars`` (the view budget, or the window alone; None: no
        limit), beside the ``beside`` characters of intent and diff the request also holds."""
        if chars is None:
            return views
        over = max(0, beside - DIFF_ALLOWANCE * CHARS_PER_TOKEN)
        budget = max(FLOOR * CHARS_PER_TOKEN, chars - over)
        if sum(v.shown_chars for v in views.values()) <= budget:
            return views
        spec = self.prompts.spec
        # The author of a run without signals has nothing but the given tests to focus on.
        called: dict[str, Iterable[int]] = dict(
            spec.focus(texts, comparison.introduced, given=True) if spec is not None else {}
        )
        for path, lines in self._located(texts, comparison).items():
            called[path] = set(called.get(path, ())) | lines
        return fit_views(views, texts, self.before, comparison.introduced, rewritten, called, budget)

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
        diff = _diff(self.before, texts)
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
            views=self.views(texts, current.comparison, diff),
        )
        reply = self.call(request, round_number)
        try:
            return self.rules.cite(parse_critique(reply.tool_input, reply.text, texts), texts)
        except CritiqueError as exc:
            retry = self._retry(request, reply.text, "critique_retry", str(exc) + _why(reply))
            reply = self.call(retry, round_number)
            try:
                return self.rules.cite(parse_critique(reply.tool_input, reply.text, texts), texts)
            except CritiqueError as again:
                raise CritiqueError(str(again) + _why(reply)) from again

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
                request = self._answer(request, reply.text, texts)
                reply = self.call(request, round_number)
            start = self.ledger.clock()
            try:
                return self._apply(reply.text, texts, cut_off=reply.stop_reason == "max_tokens")
            except RejectedEdit as exc:
                if attempt == 2:
                    raise RejectedEdit(exc.kind, exc.feedback + _why(reply)) from exc
                request = self._retry(
                    request, reply.text, EDIT_RETRY[self.edit_format], exc.feedback + _why(reply)
                )
            finally:
                self.ledger.time("gate", start)
        raise AssertionError("unreachable")

    def _answer(self, request: ModelRequest, reply_text: str, texts: Mapping[str, str]) -> ModelRequest:
        """``request`` continued with the model's asks and the definitions they name, within the view
        budget (or 8,000 characters when no budget is known)."""
        self.asks += 1
        budget = self._view_chars or ASK_CHARS
        shown = answer(asks_in(reply_text), self.shown, texts, budget, excerpt)
        messages = (*request.messages, Message.assistant(reply_text), Message.user(shown))
        return dataclasses.replace(request, messages=messages)

    def _retry(self, request: ModelRequest, reply_text: str, template: str, feedback: str) -> ModelRequest:
        """The retry of ``request``, within the smallest known context of the models: what is wrong comes
        first, then as much of the failed answer as still fits (a 1.5B model's retry of a 7.3k-token
        request, its 867-token answer echoed, was refused by its 8k server)."""
        if self._prompt_chars is None:
            return self.prompts.retry(request, reply_text, template, feedback)
        room = self._prompt_chars - len(request.prompt_text()) - len(prompt_text(template))
        if len(feedback) > max(room, MIN_FEEDBACK):
            cut = max(room, MIN_FEEDBACK)
            feedback = (
                feedback[:cut] + f"\n[... {len(feedback) - cut} more characters of this message cut ...]"
            )
        echo = room - len(feedback)
        if echo < MIN_ECHO:
            note = f"(my answer of {len(reply_text)} characters, left out here for room; the error follows)"
            return self.prompts.retry(request, note, template, feedback)
        return self.prompts.retry(request, reply_text, template, feedback, max_echo=min(echo, MAX_ECHO))

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


def _is_test_failure(signal: Signal) -> bool:
    return signal.source == "pytest" and not signal.code.startswith("collect:")


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
