"""The signals section of a request: what ruff and pytest say of the change, folded within a budget.

Failing tests are folded by where they fail (``failures.fold``); of a file reviewed whole, the lint
signals already in it at the start of the run are listed apart, as context, not as faults.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from coderefine.refiner.context import FileView
from coderefine.refiner.sections import fence
from coderefine.signals.base import Comparison, Signal
from coderefine.signals.failures import fold, split_locals

MAX_SIGNALS = 40  # the context signals listed; the rest are counted


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


def in_view(signal: Signal, views: Mapping[str, FileView] | None) -> bool:
    """Whether a request that shows ``views`` (None: every file whole) shows the line of ``signal``."""
    view = (views or {}).get(signal.path)
    return view is None or view.whole or view.shows(signal.line, signal.end_line or signal.line)


def signals_section(
    comparison: Comparison,
    context: Sequence[Signal] = (),
    tokens: int = SIGNAL_TOKENS,
    views: Mapping[str, FileView] | None = None,
) -> str:
    """The signals the change introduced, folded within about ``tokens``; of a whole-file review, the
    lint signals that were already in the files at the start of the run (``context``) are listed apart,
    as context, not as faults: those in lines the request shows (``views``), the others counted, since
    old lint in lines the model cannot see is no help in writing an edit."""
    introduced, older = split_context(comparison, context)
    unseen = sum(not in_view(s, views) for s in older)
    older = tuple(s for s in older if in_view(s, views))
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
    if older or unseen:
        shown = [signal_text(s) for s in older[:MAX_SIGNALS]]
        if len(older) > MAX_SIGNALS:
            shown.append(f"- ... and {len(older) - MAX_SIGNALS} more")
        if unseen:
            shown.append(f"- ... and {unseen} more in lines this request does not show")
        section += "\n\n" + CONTEXT_NOTE + "\n" + fence("context", "\n".join(shown))
    return section
