"""What a run's requests may hold, decided once: each section's share, from the settings and the windows.

A request is the system prompt, the code under review (whole files or excerpts with an outline) and a
message of named sections (``sections.py``). Every size in it comes from one ``RequestBudget``, made
here for the run:

- The sections of facts each have a budget in tokens, a setting each (``signal-tokens``,
  ``spec-tokens``, ``rules-tokens``), scaled to the smallest window among the roles that read them
  unless the user chose it (``windows.signal_budget``): they are cut where they say so, never dropped.
- The code has one budget, shared by everything that shows code in the critic's and the reviser's
  requests: the views (the cached prefix, the same for both), then, in the reviser's message, the lines
  a critique names that the views leave out, then the definitions a model asks to see (``asks.py``).
  What the views leave of it goes to the others, with a floor, so that a reviser told of lines it was
  never shown is shown them (``code_room``). The budget is the smaller of ``view-tokens`` and what the
  smallest window leaves after the reply, the other sections and the fixed part of a request.
- The author is bounded by the window alone: it writes from the intent, with no critique to point it
  anywhere (a one-shot shown excerpts of a module with two bugs missed the one they hid).
- A whole prompt (a retry, which echoes a failed answer) keeps within the window.
- A critic's or reviser's request as a whole aims at ``request-tokens``: what the system prompt, the tool
  definition, the views and the sections that cannot be cut (the intent, the diff, the critique) leave is
  shared by the signals, the failing tests' source and the lines a critique names, each cut down to a
  floor when together they would pass it (``allot.py``).

Why the code's budget is not also given what the fact sections leave unused: that room would make the
requests of a one-bug fix grow back toward the window, the cost this budget is there to end; the facts
are cut by what they carry, the code by how much of it the evidence points at.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from coderefine.config import Settings
from coderefine.models.base import Role
from coderefine.models.roles import role_specs
from coderefine.models.windows import prompt_limit, signal_budget, view_budget
from coderefine.refiner.spec import CHARS_PER_TOKEN

# What a window holds is a hard limit (a local server refuses a request past it), so characters are
# counted against it at three a token, not four: Qwen2.5-Coder's tokenizer counted requests of code,
# outlines and tracebacks at 2.96 and 3.1 characters a token (tomlkit's items.py, critic and reviser),
# and a retry sized at 3.6 a token was refused by its 8k server (9,802 tokens asked). Budgets the user
# sets in tokens (view-tokens) are targets, not limits, and keep four.
WINDOW_CHARS_PER_TOKEN = 3
# The least a reviser is shown of the lines a critique names, or a model of what it asked for, however much
# of the code budget the views took: a critique naming lines the model cannot see is a bare miss.
CODE_ROOM_FLOOR = 1_000 * CHARS_PER_TOKEN
# What the definitions a model asked for may take when no budget is known (no window, view-tokens 0).
UNBOUNDED_ASK_CHARS = 8_000


@dataclass(frozen=True)
class RequestBudget:
    """Each section's share of a run's requests: tokens for the fact sections (0: no limit), characters
    for the code (None: no limit)."""

    signal_tokens: int
    spec_tokens: int
    rules_tokens: int
    code_chars: int | None  # the critic's and reviser's code: views, then named lines and asks
    author_chars: int | None  # the author's views: the window alone
    prompt_chars: int | None  # a whole prompt, retries included
    request_chars: int | None = None  # a critic's or reviser's request as a whole (allot.py)

    def code_room(self, shown: int) -> int | None:
        """What the code budget leaves for excerpts and asks once the views took ``shown`` characters;
        at least ``CODE_ROOM_FLOOR`` (None: no limit)."""
        if self.code_chars is None:
            return None
        return max(CODE_ROOM_FLOOR, self.code_chars - shown)


def request_budget(settings: Settings) -> RequestBudget:
    """The run's budget, from ``settings`` and the windows of the models of each role."""
    readers = role_specs(settings)
    chosen = settings.sources
    signals = signal_budget(
        settings.signal_tokens,
        "signal_tokens" in chosen,
        # The roles whose requests carry the signals: the author's never do.
        (readers["critic"], readers["reviser"]),
    )
    # Scaled with the critic's context like the signals: 1,000 tokens of rules in a gguf: model's 8k
    # window left the file too little room.
    rules = signal_budget(settings.rules_tokens, "rules_tokens" in chosen, (readers["critic"],))
    every = _every_role(readers)
    spec = signal_budget(settings.spec_tokens, "spec_tokens" in chosen, every)
    out = settings.max_output_tokens
    window = view_budget(every, out, "max_output_tokens" in chosen, signals + spec + rules)
    sizes = [
        chars
        for chars in (
            window * WINDOW_CHARS_PER_TOKEN if window is not None else None,
            settings.view_tokens * CHARS_PER_TOKEN if settings.view_tokens else None,
        )
        if chars is not None
    ]
    limit = prompt_limit(every, out, "max_output_tokens" in chosen)
    return RequestBudget(
        signal_tokens=signals,
        spec_tokens=spec,
        rules_tokens=rules,
        code_chars=min(sizes) if sizes else None,
        author_chars=window * WINDOW_CHARS_PER_TOKEN if window is not None else None,
        prompt_chars=limit * WINDOW_CHARS_PER_TOKEN if limit is not None else None,
        request_chars=settings.request_tokens * CHARS_PER_TOKEN if settings.request_tokens else None,
    )


def _every_role(readers: Mapping[Role, str]) -> tuple[str, str, str]:
    return (readers["author"], readers["critic"], readers["reviser"])
