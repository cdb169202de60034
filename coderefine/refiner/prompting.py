"""Build the requests of the three roles from the prompt texts and the data of a round.

Layout, for prompt caching: the system prompt (protocol) and the code under review come first, the
latter marked as the end of the cacheable prefix; the critique tool is listed in every request so that
critic and reviser share that prefix; what changes per call (the role, the intent, the diff, the
signals, the critique) comes last. Every piece of data is fenced with an id derived from its content,
so no content can close its own fence.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from pathlib import Path

from coderefine.edits.blocks import EXAMPLE_PATH
from coderefine.models.base import Block, Message, ModelRequest
from coderefine.refiner.asks import HOW_TO_ASK
from coderefine.refiner.context import PARTIAL_RULE, FileView, Span, view_of
from coderefine.refiner.critique import CRITIQUE_TOOL, MERGED_CRITIQUE_TOOL, Critique
from coderefine.refiner.localize import Localization
from coderefine.refiner.sections import Sections, assemble
from coderefine.refiner.spec import SpecSource
from coderefine.signals.base import Comparison, Signal
from coderefine.signals.failures import fold, split_locals

PROTOCOL_VERSION = "4"
PROMPTS = Path(__file__).parent / "prompts"
MAX_SIGNALS = 40
MAX_ECHO = 20_000


@cache
def prompt_text(name: str) -> str:
    return (PROMPTS / f"{name}.txt").read_text(encoding="utf-8")


def fence(kind: str, content: str, label: str = "") -> str:
    """``content`` between data markers that it cannot contain (the id is a hash of the content)."""
    tag = hashlib.sha256(f"{kind}\0{label}\0{content}".encode()).hexdigest()[:12]
    head = f"<<<DATA kind={kind}" + (f" {label}" if label else "") + f" id={tag}>>>"
    body = content if content.endswith("\n") or not content else content + "\n"
    return f"{head}\n{body}<<<END DATA id={tag}>>>"


def signal_text(signal: Signal) -> str:
    text = f"- [{signal.severity}] {signal.location()} {signal.code}: {signal.message}"
    if signal.source == "pytest" and signal.detail:
        trace, values = split_locals(signal.detail)
        tail = trace.strip().splitlines()[-8:] + values.strip().splitlines()
        text += "\n" + "\n".join("    " + line for line in tail)
    elif signal.source == "format" and signal.detail.strip():
        text += " (ruff format would write: " + signal.detail.strip().splitlines()[0][:120] + ")"
    return text


def short_text(signal: Signal) -> str:
    return f"- [{signal.severity}] {signal.code}: {signal.message}"


SIGNAL_TOKENS = 1_500  # the default budget of the signals section (setting ``signal-tokens``)
CHARS_PER_TOKEN = 4
LEFT_OUT = (
    "{count} of these signals are counted, not listed, to keep this request short; "
    "`coderefine check --format json` lists every one."
)


def signal_lines(signals: Sequence[Signal], tokens: int = 0) -> list[str]:
    """Each signal as text, failing tests folded by where they fail (``failures.fold``): the first
    ``FULL`` of a group with their traceback, the others by their id and message alone, within about
    ``tokens`` (0: no limit). A suite with a hundred tests failing in one helper spent most of a request
    on repeated tracebacks."""
    folded = fold(signals, signal_text, short_text, tokens * CHARS_PER_TOKEN)
    lines = list(folded.lines)
    if folded.counted:
        lines.append(LEFT_OUT.format(count=folded.counted))
    return lines


NOT_COLLECTED = "(not collected: no linter or test was run; nothing is known about the code's signals)"


CONTEXT_NOTE = (
    "Lint signals already in these files when this run started (context, not faults of the change: do not "
    "rewrite code or add `# noqa` only to silence them, and do not ask for that; leave them as they are "
    "unless the intent asks otherwise):"
)


def preexisting(comparison: Comparison, whole: Sequence[str]) -> tuple[Signal, ...]:
    """The lint signals of the files reviewed whole (no version before the change to compare with) as
    they were at the start of the run: context for the prompts, not faults of the change. Failing tests
    stay facts to act on."""
    return tuple(s for s in comparison.introduced if s.source == "ruff" and s.path in whole)


def split_context(
    comparison: Comparison, context: Sequence[Signal]
) -> tuple[tuple[Signal, ...], tuple[Signal, ...]]:
    """The introduced signals that are the change's, and those that are ``context`` (matched by key, as
    a multiset: a second copy of an old diagnostic is the change's)."""
    remaining = Counter(s.key() for s in context)
    introduced: list[Signal] = []
    older: list[Signal] = []
    for signal in comparison.introduced:
        if remaining[signal.key()] > 0:
            remaining[signal.key()] -= 1
            older.append(signal)
        else:
            introduced.append(signal)
    return tuple(introduced), tuple(older)


def signals_section(
    comparison: Comparison, context: Sequence[Signal] = (), tokens: int = SIGNAL_TOKENS
) -> str:
    """The signals the change introduced, folded within about ``tokens``; of a whole-file review, the
    lint signals that were already in the files at the start of the run (``context``) are listed apart,
    as context, not as faults."""
    introduced, older = split_context(comparison, context)
    lines = signal_lines(introduced, tokens)
    for status in comparison.missing():
        lines.append(
            f"- [missing] {status.source} did not run cleanly ({status.note}); its facts are unknown"
        )
    collected = not comparison.statuses or any(s.state != "skipped" for s in comparison.statuses)
    # With no source run at all (the self-refine ablation), "no signal" would read as "the code is clean".
    empty = "(none: the change introduced no signal)" if collected else NOT_COLLECTED
    body = "\n".join(lines) if lines else empty
    note = (
        f"{len(comparison.existing)} older signals were already there before the change and are not listed."
    )
    section = (
        "Signals introduced by the change:\n"
        + fence("signals", body)
        + ("\n" + note if comparison.existing else "")
    )
    if older:
        shown = [signal_text(s) for s in older[:MAX_SIGNALS]]
        if len(older) > MAX_SIGNALS:
            shown.append(f"- ... and {len(older) - MAX_SIGNALS} more")
        section += "\n\n" + CONTEXT_NOTE + "\n" + fence("context", "\n".join(shown))
    return section


def excerpt(view: FileView, span: Span) -> str:
    return fence("code", view.excerpt_text(span), f"path={view.path} lines={span[0]}-{span[1]}")


def code_block(
    files: Mapping[str, str], views: Mapping[str, FileView] | None = None, edit_format: str = "search-replace"
) -> Block:
    parts = ["The files under review, as they are now:"]
    for path, text in files.items():
        view = (views or {}).get(path)
        if view is None or view.whole:
            parts.append(f"{path}:\n" + fence("code", text, f"path={path}"))
            continue
        lines = text.count("\n")
        parts.append(
            f"{path} has {lines} lines, so only the parts this change touches are shown, verbatim, each "
            f"labelled with its line numbers; {PARTIAL_RULE[edit_format]}."
        )
        parts.extend(excerpt(view, span) for span in view.excerpts)
        if view.outline:
            parts.append(
                f"The other definitions of {path} (line: signature), not shown:\n"
                + fence("outline", view.outline, f"path={path}")
            )
    return Block("\n\n".join(parts), cache=True)


def issue_excerpts(views: Mapping[str, FileView], critique: Critique) -> str:
    """Excerpts of the lines the critique refers to that the views leave out, for the reviser."""
    parts: list[str] = []
    for issue in critique.issues:
        view = views.get(issue.path)
        if view is None or view.whole:
            continue
        # Not only the issue's own lines: an issue anchored on a definition's first line (its evidence
        # quoted the `def` line) is about its body, which the view may leave out.
        wider = view_of(view.path, view.text, range(issue.line, (issue.end_line or issue.line) + 1), 1)
        parts.extend(excerpt(view, s) for s in wider.excerpts if not view.shows(*s))
    if not parts:
        return ""
    return "Lines the critique refers to that are not shown above:\n\n" + "\n\n".join(dict.fromkeys(parts))


def _asks_note(views: Mapping[str, FileView] | None) -> str:
    """How to ask for code not shown, when some file is shown in part."""
    return HOW_TO_ASK if any(not v.whole for v in (views or {}).values()) else ""


def whole_note(whole: Sequence[str], views: Mapping[str, FileView]) -> str:
    """What the critic is told of the files under review whole (no version before the change): all of
    each file is under review; and of one shown in part, which parts are shown and how to see more."""
    if not whole:
        return ""
    note = (
        "Under review whole (no version before the change to compare with): "
        + ", ".join(whole)
        + "; all of each file is under review, not only some of its functions and classes."
    )
    partial = [views[p] for p in whole if p in views and not views[p].whole]
    if partial:
        shown = "; ".join(f"{v.path}: lines {v.describe()}" for v in partial)
        note += (
            f" Only parts are shown above ({shown}), chosen by the failing tests, the signals and the "
            "change; the outline lists the rest. An issue that names lines or a definition not shown "
            "brings them to the reviser."
        )
    return note


# Per edit format (edits/formats.py): the system prompt's section on writing edits, what the author and
# the reviser are asked to answer with, and the retry after an answer that could not be used.
EDIT_RULES = {"search-replace": "edit_search_replace", "definition": "edit_definition", "whole": "edit_whole"}
EDIT_ANSWER = {
    "search-replace": "edit blocks",
    "definition": "complete definitions in code blocks",
    "whole": "the complete files in code blocks",
}
EDIT_RETRY = {"search-replace": "retry", "definition": "retry_code", "whole": "retry_code"}

MERGE_NOTE = (
    "If your review has exactly one issue and a signal listed above shows it (a failing test, a "
    "finding on its lines), also put in `edits` the edit blocks that fix it, as a reviser would write "
    "them; with any other review, leave `edits` out."
)


class PromptBuilder:
    """Requests for each role. ``max_tokens`` bounds each reply. With ``merge`` every request lists the
    critique tool whose input may carry edit blocks, and the critic is asked to fill them for a lone
    issue that a signal shows."""

    def __init__(
        self,
        max_tokens: int,
        *,
        merge: bool = False,
        edit_format: str = "search-replace",
        signal_tokens: int = SIGNAL_TOKENS,
        spec: SpecSource | None = None,
    ) -> None:
        self._max_tokens = max_tokens
        # The failing tests' source: what they check is the specification (None: not shown).
        self.spec = spec
        self._merge = merge
        self.edit_format = edit_format
        self._signal_tokens = signal_tokens
        # Lint signals already in whole files at the start of the run: shown as context, not as faults.
        self.context: tuple[Signal, ...] = ()
        # Where the failing tests point, once the session has ranked it (None: not known, not shown).
        self.localization: Localization | None = None
        # The project's rules section for the files under review (refiner/rules.py); None: no rules.
        self.rules: Callable[[Sequence[str]], str] | None = None

    def _system(self, files: Mapping[str, str], views: Mapping[str, FileView] | None) -> tuple[Block, ...]:
        # The rules' example names a file under review: a small model copies the example's path as it is.
        rules = prompt_text(EDIT_RULES[self.edit_format]).replace(
            EXAMPLE_PATH, next(iter(files), EXAMPLE_PATH)
        )
        return (
            Block(
                prompt_text("system")
                .replace("{protocol_version}", PROTOCOL_VERSION)
                .replace("{edit_format}", rules)
            ),
            code_block(files, views, self.edit_format),
        )

    def _request(
        self,
        role: str,
        files: Mapping[str, str],
        sections: Sections,
        force: bool,
        views: Mapping[str, FileView] | None = None,
    ) -> ModelRequest:
        # Every role lists the same tool, even the edit requests that must not call it (tool choice
        # "none"): Anthropic caches the prefix in the order tools, system, messages, and a change of the
        # tool definitions (listing none included) invalidates all of it, while a change of tool_choice
        # invalidates only the messages ("What invalidates the cache", Anthropic's prompt-caching
        # docs). So critic and reviser share one cached prefix, tools + system + code, byte for byte
        # (tests/models/test_anthropic.py); without the tool, each reviser call would write it again
        # at 1.25x instead of reading it at 0.1x.
        return ModelRequest(
            role=role,  # type: ignore[arg-type]
            system=self._system(files, views),
            messages=(Message.user(assemble(role, sections)),),
            max_tokens=self._max_tokens,
            tool=MERGED_CRITIQUE_TOOL if self._merge else CRITIQUE_TOOL,
            force_tool=force,
        )

    def critic(
        self,
        files: Mapping[str, str],
        *,
        intent: str,
        diff: str,
        changed: Sequence[str],
        comparison: Comparison,
        views: Mapping[str, FileView] | None = None,
        whole: Sequence[str] = (),
    ) -> ModelRequest:
        """``whole``: the files with no version before the change, under review as a whole."""
        scope = (
            "The change, as a unified diff against the code before it:\n" + fence("diff", diff)
            if diff.strip()
            else "There is no diff: the files above are under review as they are."
        )
        sections: dict[str, str | Sequence[str]] = {
            "role": "ROLE: CRITIC. Call `report_critique` with your review of this change.",
            "intent": "The intent of the change:\n" + fence("intent", intent),
            "rules": self.rules(list(files)) if self.rules is not None else "",
            "scope": scope,
            "whole": whole_note(whole, views or {}),
            "signals": signals_section(comparison, self.context, self._signal_tokens),
            "localization": self._localization(),
            "spec": self._spec(files, comparison.introduced),
        }
        if changed:
            sections["changed"] = "Functions and classes the change touches: " + ", ".join(changed)
        if self._merge:
            sections["merge"] = MERGE_NOTE
        return self._request("critic", files, sections, force=True, views=views)

    def reviser(
        self,
        files: Mapping[str, str],
        *,
        intent: str,
        critique: Critique,
        comparison: Comparison,
        views: Mapping[str, FileView] | None = None,
        fix: Sequence[int] | None = None,
    ) -> ModelRequest:
        """``fix``: the indexes of the issues to address in this call (None: all of them). The reviser
        still sees every issue, the others marked as not for this call, so that the critique it reads
        is the critic's whole, and its summary does not describe issues it was never shown."""
        data = critique.as_data()
        answer = EDIT_ANSWER[self.edit_format]
        role = f"ROLE: REVISER. Answer with {answer} that address this critique."
        if fix is not None:
            for index, issue in enumerate(data["issues"]):
                issue["fix_in_this_call"] = index in fix
            role = (
                f"ROLE: REVISER. Answer with {answer} that address the issues of this critique marked "
                '"fix_in_this_call": true, and only those; the others are handled apart: leave their code '
                "as it is."
            )
        sections: dict[str, str | Sequence[str]] = {
            "role": role,
            "intent": "The intent of the change:\n" + fence("intent", intent),
            "critique": "The critique:\n" + fence("critique", json.dumps(data, ensure_ascii=False)),
            "unseen": issue_excerpts(views or {}, critique),
            "signals": signals_section(comparison, self.context, self._signal_tokens),
            "localization": self._localization(),
            "spec": self._spec(files, comparison.introduced),
            "files": "Files you may edit: " + ", ".join(files),
            "asks": _asks_note(views),
        }
        return self._request("reviser", files, sections, force=False, views=views)

    def author(
        self,
        files: Mapping[str, str],
        *,
        intent: str,
        failing: Sequence[Signal] = (),
        views: Mapping[str, FileView] | None = None,
    ) -> ModelRequest:
        """``failing``: the signals of the files as they are, whose failing tests' source is shown (with
        none, the tests the spec source was given, if any). ``views``: excerpts of files that would not
        fit the model's context whole (None: every file whole)."""
        sections: dict[str, str | Sequence[str]] = {
            "role": f"ROLE: AUTHOR. Answer with {EDIT_ANSWER[self.edit_format]} that implement this intent.",
            "intent": "The intent:\n" + fence("intent", intent),
            "localization": self._localization(),
            "spec": self._spec(files, failing, given=True),
            "files": "Files you may edit: " + ", ".join(files),
            "asks": _asks_note(views),
        }
        return self._request("author", files, sections, force=False, views=views)

    def _localization(self) -> str:
        return self.localization.section() if self.localization is not None else ""

    def _spec(self, files: Mapping[str, str], signals: Sequence[Signal], *, given: bool = False) -> list[str]:
        if self.spec is None:
            return []
        text = self.spec.section(files, signals, fence, given=given)
        return [text] if text else []

    @staticmethod
    def retry(
        request: ModelRequest, reply_text: str, template: str, feedback: str, max_echo: int = MAX_ECHO
    ) -> ModelRequest:
        """The same conversation, with the model's failed answer (at most ``max_echo`` characters of it)
        and what was wrong with it."""
        follow_up = prompt_text(template).replace("{feedback}", feedback)
        if len(reply_text) > max_echo:
            # A runaway answer is not worth sending back whole: the error says what was wrong with it.
            reply_text = (
                reply_text[:max_echo] + f"\n[... {len(reply_text) - max_echo} more characters cut ...]"
            )
        messages = (*request.messages, Message.assistant(reply_text or "(no text)"), Message.user(follow_up))
        return ModelRequest(
            request.role, request.system, messages, request.max_tokens, request.tool, request.force_tool
        )
