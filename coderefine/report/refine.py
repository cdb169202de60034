"""Reports of a refine run: per round the critique, signals before and after, tokens, cost and time."""

from __future__ import annotations

import dataclasses
import difflib
import json
from collections.abc import Mapping, Sequence

from coderefine.models.base import Usage
from coderefine.refiner.records import RefineResult, RoundRecord
from coderefine.report.jsonout import SCHEMA_VERSION, signal_data
from coderefine.report.text import failed_tests, signal_entries, signal_line, status_line
from coderefine.report.usage import charges_data, charges_text
from coderefine.signals.base import Comparison
from coderefine.timings import Row, rows_data

_STOPS = {
    "passed": "the critic passed the change",
    "no-progress": "a round made no progress",
    "repeated": "a revision repeated an earlier version",
    "rounds": "the round limit was reached",
    "budget": "the token or cost budget was reached",
    "gate": "the draft did not pass the gate",
}


def stop_text(result: RefineResult) -> str:
    """Why the run stopped; for "passed", which of its two ways: the critic's pass, or the signals
    behind every issue resolved with no confirming critique asked."""
    if result.stop != "passed":
        return _STOPS.get(result.stop, result.stop)
    last = result.rounds[-1] if result.rounds else None
    if last is not None and last.outcome == "accepted":
        return "the signals behind every issue the critic raised are resolved (no confirming critique asked)"
    clean = result.evaluation.comparison.clean
    return _STOPS["passed"] + (" and the signals are clean" if clean else "")


def final_diff(result: RefineResult) -> str:
    parts: list[str] = []
    for path in result.changed_paths():
        parts.extend(
            difflib.unified_diff(
                result.original.get(path, "").splitlines(keepends=True),
                result.final[path].splitlines(keepends=True),
                f"a/{path}",
                f"b/{path}",
            )
        )
    return "".join(line if line.endswith("\n") else line + "\n" for line in parts)


def _count(comparison: Comparison) -> str:
    if not comparison.introduced and not comparison.missing():
        return "clean"
    weights = comparison.weight()
    parts = [f"{n} {label}" for n, label in zip(weights, ("error", "warning", "info"), strict=True) if n]
    missing = [s.source for s in comparison.missing()]
    if missing:
        parts.append("missing: " + ", ".join(missing))
    return ", ".join(parts)


def _tokens(usage: Usage) -> str:
    cached = usage.cache_read_tokens
    return (
        f"{usage.total_input / 1000:.1f}k in"
        + (f" ({cached / 1000:.1f}k cached)" if cached else "")
        + f" / {usage.output_tokens / 1000:.1f}k out"
    )


def _round_lines(record: RoundRecord) -> list[str]:
    head = "draft" if record.number == 0 else f"round {record.number}"
    lines: list[str] = []
    if record.critique is not None:
        critique = record.critique
        count = (
            f" — {len(critique.issues)} issue{'s' if len(critique.issues) != 1 else ''}"
            if critique.issues
            else ""
        )
        lines.append(f"{head}: critic says {critique.verdict}{count}")
        if critique.summary:
            lines.append(f"  {critique.summary}")
        for issue in critique.issues:
            lines.append(f"  [{issue.severity}] {issue.path}:{issue.line} {issue.title}")
            if issue.suggestion:
                lines.append(f"      → {issue.suggestion}")
        for repair in critique.repairs:
            lines.append(f"  (critique repaired: {repair})")
    else:
        lines.append(f"{head}:")
    if record.outcome != "passed":
        outcome = f"  revision {record.outcome}"
        if record.changed:
            outcome += f" (changed {', '.join(record.changed)})"
        if record.after is not None:
            outcome += f"; signals {_count(record.before)} → {_count(record.after)}"
        lines.append(outcome)
        if record.note:  # an accepted round's says which calls it saved, or why attached edits went unused
            lines.extend("    " + row for row in record.note.strip().splitlines()[:12])
    return lines


def render_refine(
    result: RefineResult, *, written: tuple[str, ...] = (), show_diff: bool = True, not_written: str = ""
) -> str:
    """The run as text. ``not_written`` says why a changed result was not written (a dry run, or a
    candidate that is not shown better); its diff is then labelled as the best candidate's."""
    files = ", ".join(result.change.paths)
    lines = [f"coderefine: {files}", f"intent: {result.intent}", ""]
    for record in result.rounds:
        lines.extend(_round_lines(record))
    lines.append("")
    lines.append(f"stopped: {stop_text(result)}")
    before, after = _count(result.initial.comparison), _count(result.evaluation.comparison)
    lines.append(f"introduced signals: before {before}; after {after}")
    final = result.evaluation.comparison
    lines.extend(signal_entries(final.introduced, full=lambda s: "  " + signal_line(s)))
    lines.append(status_line(final.statuses, failed_tests(final.introduced + final.existing)))
    usage = charges_text(result.charges) or " · ".join(
        f"{role} {_tokens(u)}" for role, u in result.usage.items()
    )
    lines.append(f"tokens: {usage or 'no model calls'} · cost ${result.cost:.4f}")
    if result.asks:
        lines.append(f"asks: {result.asks} (answers that asked to see code not shown, and were shown it)")
    if result.timings:
        lines.append("time: " + " · ".join(f"{k} {v:.1f}s" for k, v in result.timings.items()))
    if show_diff:
        diff = final_diff(result)
        lines.append("")
        if diff and not_written:
            lines.append("the best candidate (not written):")
        lines.append(diff.rstrip("\n") if diff else "no change to write")
    if written:
        lines.append("")
        lines.append(f"wrote {', '.join(written)} ('coderefine undo' restores the previous version)")
    elif not_written and result.changed:
        lines.append("")
        lines.append(f"nothing was written: {not_written}")
    return "\n".join(lines) + "\n"


def _comparison_data(comparison: Comparison | None) -> dict[str, object] | None:
    if comparison is None:
        return None
    return {
        "introduced": [signal_data(s) for s in comparison.introduced],
        "statuses": [dataclasses.asdict(s) for s in comparison.statuses],
    }


def _usage_data(usage: Mapping[str, Usage]) -> dict[str, object]:
    return {role: dataclasses.asdict(u) for role, u in usage.items()}


def refine_data(
    result: RefineResult, *, written: tuple[str, ...] = (), not_written: str = "", phases: Sequence[Row] = ()
) -> dict[str, object]:
    """``phases``: the run's wall time phase by phase (``--timings``; the CLI keeps them), else none."""
    return {
        "version": SCHEMA_VERSION,
        "files": list(result.change.paths),
        "intent": result.intent,
        "drafted": result.drafted,
        "edit_format": result.edit_format,
        "stop": result.stop,
        "changed": list(result.changed_paths()),
        "written": list(written),
        "not_written": not_written if result.changed and not written else "",
        "diff": final_diff(result),
        "rounds": [
            {
                "number": r.number,
                "critique": r.critique.as_data() if r.critique else None,
                "critique_repairs": list(r.critique.repairs) if r.critique else [],
                "outcome": r.outcome,
                "changed_symbols": list(r.changed),
                "signals_before": _comparison_data(r.before),
                "signals_after": _comparison_data(r.after),
                "note": r.note,
            }
            for r in result.rounds
        ],
        "signals_before": _comparison_data(result.initial.comparison),
        "signals_after": _comparison_data(result.evaluation.comparison),
        "usage": _usage_data(result.usage),
        "models": charges_data(result.charges),
        "cost_usd": round(result.cost, 6),
        "timings": {k: round(v, 3) for k, v in result.timings.items()},
        "phases": rows_data(phases),
    }


def render_refine_json(
    result: RefineResult, *, written: tuple[str, ...] = (), not_written: str = "", phases: Sequence[Row] = ()
) -> str:
    data = refine_data(result, written=written, not_written=not_written, phases=phases)
    return json.dumps(data, indent=2) + "\n"
