"""Build the requests of the three roles from the prompt texts and the data of a round.

Layout, for prompt caching: the system prompt (protocol) and the code under review come first, the
latter marked as the end of the cacheable prefix; the critique tool is listed in every request so that
critic and reviser share that prefix; what changes per call (the role, the intent, the diff, the
signals, the critique) comes last. Every piece of data is fenced with an id derived from its content,
so no content can close its own fence.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from pathlib import Path

from coderefine.edits.blocks import EXAMPLE_PATH
from coderefine.models.base import Block, Message, ModelRequest, ToolSpec
from coderefine.models.windows import FLOOR
from coderefine.refiner.allot import Flexible, SectionText, fit_sections
from coderefine.refiner.asks import CRITIC_HOW_TO_ASK
from coderefine.refiner.budget import CODE_ROOM_FLOOR
from coderefine.refiner.code_section import asks_note, code_block, issue_excerpts, whole_note
from coderefine.refiner.context import FileView
from coderefine.refiner.critique import CRITIQUE_TOOL, MERGED_CRITIQUE_TOOL, Critique
from coderefine.refiner.localize import Localization
from coderefine.refiner.sections import Sections, assemble, fence
from coderefine.refiner.signal_section import SIGNAL_TOKENS, signals_section
from coderefine.refiner.spec import CHARS_PER_TOKEN, SpecSource
from coderefine.signals.base import Comparison, Signal

PROTOCOL_VERSION = "5"
PROMPTS = Path(__file__).parent / "prompts"
MAX_ECHO = 20_000


@cache
def prompt_text(name: str) -> str:
    return (PROMPTS / f"{name}.txt").read_text(encoding="utf-8")


EDIT_RULES = {"search-replace": "edit_search_replace", "definition": "edit_definition", "whole": "edit_whole"}
EDIT_ANSWER = {
    "search-replace": "edit blocks",
    "definition": "complete definitions in code blocks",
    "whole": "the complete files in code blocks",
}
EDIT_RETRY = {"search-replace": "retry", "definition": "retry_code", "whole": "retry_code"}

# The least the signals and the failing tests' source are cut to when a request's total is passed: the
# least a small model's window gives them (models/windows.py).
FACTS_FLOOR = FLOOR * CHARS_PER_TOKEN

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
        request_chars: int | None = None,
    ) -> None:
        self._max_tokens = max_tokens
        # What a critic's or reviser's request aims at as a whole (allot.py); None: no total.
        self._request_chars = request_chars
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

    def _request(self, role: str, system: tuple[Block, ...], sections: Sections, force: bool) -> ModelRequest:
        # Every role lists the same tool, even the edit requests that must not call it (tool choice
        # "none"): Anthropic caches the prefix in the order tools, system, messages, and a change of the
        # tool definitions (listing none included) invalidates all of it, while a change of tool_choice
        # invalidates only the messages ("What invalidates the cache", Anthropic's prompt-caching
        # docs). So critic and reviser share one cached prefix, tools + system + code, byte for byte
        # (tests/models/test_anthropic.py); without the tool, each reviser call would write it again
        # at 1.25x instead of reading it at 0.1x.
        return ModelRequest(
            role=role,  # type: ignore[arg-type]
            system=system,
            messages=(Message.user(assemble(role, sections)),),
            max_tokens=self._max_tokens,
            tool=self._tool(),
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
        sections: dict[str, SectionText] = {
            "role": "ROLE: CRITIC. Call `report_critique` with your review of this change.",
            "intent": "The intent of the change:\n" + fence("intent", intent),
            "rules": self.rules(list(files)) if self.rules is not None else "",
            "scope": scope,
            "whole": whole_note(whole, views or {}),
            "localization": self._localization(),
        }
        if changed:
            sections["changed"] = "Functions and classes the change touches: " + ", ".join(changed)
        if self._merge:
            sections["merge"] = MERGE_NOTE
        if any(not v.whole for v in (views or {}).values()):
            sections["asks"] = CRITIC_HOW_TO_ASK
        system = self._system(files, views)
        facts = self._facts(files, comparison, views)
        return self._request("critic", system, self._within(system, sections, facts), force=True)

    def reviser(
        self,
        files: Mapping[str, str],
        *,
        intent: str,
        critique: Critique,
        comparison: Comparison,
        views: Mapping[str, FileView] | None = None,
        fix: Sequence[int] | None = None,
        room: int | None = None,
    ) -> ModelRequest:
        """``fix``: the indexes of the issues to address in this call (None: all of them). The reviser
        still sees every issue, the others marked as not for this call, so that the critique it reads
        is the critic's whole, and its summary does not describe issues it was never shown. ``room``:
        the characters the lines the critique names may take beside the views (None: no limit)."""
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
        sections: dict[str, SectionText] = {
            "role": role,
            "intent": "The intent of the change:\n" + fence("intent", intent),
            "critique": "The critique:\n" + fence("critique", json.dumps(data, ensure_ascii=False)),
            "localization": self._localization(),
            "files": "Files you may edit: " + ", ".join(files),
            "asks": asks_note(views),
        }

        def unseen(chars: int | None) -> str:
            within = room if chars is None else chars if room is None else min(room, chars)
            return issue_excerpts(views or {}, critique, within, fix or ())

        facts = {"unseen": Flexible(unseen, CODE_ROOM_FLOOR), **self._facts(files, comparison, views)}
        system = self._system(files, views)
        return self._request("reviser", system, self._within(system, sections, facts), force=False)

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
        sections: dict[str, SectionText] = {
            "role": f"ROLE: AUTHOR. Answer with {EDIT_ANSWER[self.edit_format]} that implement this intent.",
            "intent": "The intent:\n" + fence("intent", intent),
            "localization": self._localization(),
            "spec": self._spec(files, failing, given=True),
            "files": "Files you may edit: " + ", ".join(files),
            "asks": asks_note(views),
        }
        return self._request("author", self._system(files, views), sections, force=False)

    def _facts(
        self, files: Mapping[str, str], comparison: Comparison, views: Mapping[str, FileView] | None
    ) -> dict[str, Flexible]:
        """The signals and the failing tests' source: sections a request's total may cut."""

        def signals(chars: int | None) -> str:
            # Never above its own budget: a share larger than it made the section longer than uncut.
            tokens = self._signal_tokens if chars is None else chars // CHARS_PER_TOKEN
            return signals_section(comparison, self.context, max(1, min(tokens, self._signal_tokens)), views)

        def spec(chars: int | None) -> list[str]:
            return self._spec(files, comparison.introduced, budget_chars=chars)

        return {"signals": Flexible(signals, FACTS_FLOOR), "spec": Flexible(spec, FACTS_FLOOR)}

    def _within(
        self, system: Sequence[Block], sections: Mapping[str, SectionText], facts: Mapping[str, Flexible]
    ) -> dict[str, SectionText]:
        """``sections`` and ``facts``, the latter cut to what the request's total leaves them. The tool
        every request lists counts: it is input the provider bills and the window holds."""
        outside = sum(len(b.text) for b in system) + self._tool().chars()
        return fit_sections(self._request_chars, outside, sections, facts)

    def _tool(self) -> ToolSpec:
        return MERGED_CRITIQUE_TOOL if self._merge else CRITIQUE_TOOL

    def _localization(self) -> str:
        return self.localization.section() if self.localization is not None else ""

    def _spec(
        self,
        files: Mapping[str, str],
        signals: Sequence[Signal],
        *,
        given: bool = False,
        budget_chars: int | None = None,
    ) -> list[str]:
        if self.spec is None:
            return []
        text = self.spec.section(files, signals, fence, given=given, budget_chars=budget_chars)
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
