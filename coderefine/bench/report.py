"""Benchmark results as JSON, a Markdown table, an HTML page (bench/html.py), and a plot of fix rate
against cost (with matplotlib)."""

from __future__ import annotations

import dataclasses
import json
import platform
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from coderefine.bench.result import TaskResult
from coderefine.bench.stats import rate_cell
from coderefine.bench.summary import comparisons, summary

MAX_NOTE_ROWS = 24  # the rest stay in results.json


def results_data(results: Sequence[TaskResult], meta: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "meta": {**meta, "machine": f"{platform.machine()}, Python {platform.python_version()}"},
        "summary": summary(results),
        "comparisons": comparisons(results),
        "tasks": [dataclasses.asdict(r) | {"fixed": r.fixed, "regression": r.regression} for r in results],
    }


def _money(value: float | None) -> str:
    return "-" if value is None else f"${value:.4f}"


def markdown(results: Sequence[TaskResult], meta: Mapping[str, Any]) -> str:
    table = summary(results)
    columns = [
        "strategy",
        "fixed [95% CI]",
        "mean rounds",
        "input tokens",
        "cached read",
        "output tokens",
        "cost",
        "cost / fixed",
        "tokens / fixed",
        "time",
        "time / task",
        "gate rejections",
        "regressions",
        "edit format",
    ]
    lines = [
        f"# coderefine bench: {meta.get('suite', '')} with {meta.get('model', '')}",
        "",
        "| " + " | ".join(columns) + " |",
        "|" + " --- |" * len(columns),
    ]
    for name, row in table.items():
        per_fixed = row["tokens_per_fixed"]
        cells = [
            name,
            rate_cell(row["fixed"], row["tasks"]),
            f"{row['mean_rounds']:.2f}",
            f"{row['input_tokens']:,}",
            f"{row['cache_read_tokens']:,}",
            f"{row['output_tokens']:,}",
            f"${row['cost']:.2f}",
            _money(row["cost_per_fixed"]),
            "-" if per_fixed is None else f"{per_fixed:,.0f}",
            f"{row['seconds']:.0f}s",
            f"{row.get('seconds_per_task', 0.0):.0f}s",
            str(row["gate_rejections"]),
            str(row["regressions"]),
            ", ".join(row.get("edit_formats", ())) or "-",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    for dimension in ("kind", "shape", "strength", "mutation"):
        groups = sorted({k for row in table.values() for k in row[f"by_{dimension}"]})
        if len(groups) < 2 and dimension != "kind":
            continue
        lines += ["", f"Fix rate by {dimension} (95% interval):", ""]
        lines += ["| strategy | " + " | ".join(groups) + " |", "| --- |" + " --- |" * len(groups)]
        for name, row in table.items():
            found = row[f"by_{dimension}"]
            cells = [rate_cell(found[g]["fixed"], found[g]["tasks"]) if g in found else "-" for g in groups]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
    clean = {name: row["clean"] for name, row in table.items() if "clean" in row}
    if clean:
        lines += ["", "Correct code (clean tasks): how often each strategy changed it, and broke it:", ""]
        lines += [
            "| strategy | tasks | changed | lines changed | broken |",
            "| --- | --- | --- | --- | --- |",
        ]
        for name, row in clean.items():
            lines.append(
                f"| {name} | {row['tasks']} | {row['changed']} | {row['lines_changed']} | {row['broken']} |"
            )
    reviews = {name: row["review"] for name, row in table.items() if "review" in row}
    if reviews:
        lines += ["", "Review of pull requests (a rewrite with a mutant inside, and without one):", ""]
        lines += [
            "| strategy | caught [95% CI] | false alarms / clean change | fixes tried | verified | "
            "verified and fixing | clean changes with a suggestion |",
            "| --- | --- | --- | --- | --- | --- | --- |",
        ]
        for name, row in reviews.items():
            lines.append(
                f"| {name} | {rate_cell(row['caught'], row['tasks'])} | "
                f"{row['false_alarms_per_clean']:.2f} ({row['false_alarms']} on {row['clean_changes']}) | "
                f"{row['fixes_tried']} | {row['verified']} | {row['verified_fixing']} | "
                f"{row['clean_with_suggestion']} of {row['clean_changes']} "
                f"({row['clean_suggestions']} offered) |"
            )
    flaky = {name: row for name, row in table.items() if row["reruns"] or row["flaky"]}
    if flaky:
        lines += ["", "Scoring re-runs (a failing score runs once more with generous limits):", ""]
        lines += ["| strategy | re-runs | flaky tasks (the two runs disagreed; not scored) |"]
        lines.append("| --- | --- | --- |")
        for name, row in flaky.items():
            named = ", ".join(row["flaky_tasks"]) or "none"
            lines.append(f"| {name} | {row['reruns']} | {row['flaky']}: {named} |")
    lines += _shown_rows(results)
    lines += _unfixed_rounds(results)
    pairs = comparisons(results)
    if pairs:
        lines += ["", "Pairwise, on the same tasks (McNemar's exact test):", ""]
        lines += ["| strategies | only the first fixed | only the second fixed | p | verdict |"]
        lines += ["| --- | --- | --- | --- | --- |"]
        for pair in pairs:
            lines.append(
                f"| {pair['first']} vs {pair['second']} | {pair['only_first']} | {pair['only_second']} "
                f"| {pair['p_value']:.3g} | {pair['verdict']} |"
            )
    if any(row.get("by_model") for row in table.values()):
        lines += [
            "",
            "Tokens and cost per role and model:",
            "",
            "| strategy | role and model | tokens | cost |",
        ]
        lines.append("| --- | --- | --- | --- |")
        for name, row in table.items():
            for who, spent in row.get("by_model", {}).items():
                lines.append(f"| {name} | {who} | {int(spent['tokens']):,} | ${spent['cost']:.4f} |")
    return "\n".join(lines) + "\n"


def _shown_rows(results: Sequence[TaskResult]) -> list[str]:
    """Per strategy: how many first requests showed every line the task's bugs touch (``localized``),
    the largest call, and the asks for code not shown."""
    known = [r for r in results if r.localized is not None]
    if not known:
        return []
    lines = ["", "What the first request showed (localized: every line the bugs touch was in it):", ""]
    lines += ["| strategy | localized | largest call | asks |", "| --- | --- | --- | --- |"]
    for name in dict.fromkeys(r.strategy for r in results):
        rows = [r for r in results if r.strategy == name]
        found = [r for r in rows if r.localized is not None]
        shown = sum(1 for r in found if r.localized)
        largest = max((r.largest_call for r in rows), default=0)
        asks = sum(r.asks for r in rows)
        lines.append(f"| {name} | {shown} of {len(found)} | {largest:,} | {asks} |")
    missed = sorted({f"{r.task_id} ({r.strategy})" for r in known if not r.localized})
    if missed:
        lines += ["", "First requests that hid a line the bugs touch: " + ", ".join(missed)]
    return lines


def _unfixed_rounds(results: Sequence[TaskResult]) -> list[str]:
    """The rounds of the tasks left unfixed that ended without a better version, and why: a rejected
    edit (the gate, an edit that does not apply) reads differently from a wrong fix that was tried."""
    rows = [(r, note) for r in results if not r.fixed and r.kind != "clean" for note in r.round_notes]
    if not rows:
        return []
    lines = ["", "Why unfixed tasks' rounds gave no better version (each round's first line of why):", ""]
    lines += ["| strategy | task | round |", "| --- | --- | --- |"]
    for result, note in rows[:MAX_NOTE_ROWS]:
        lines.append(f"| {result.strategy} | {result.task_id} | {note.replace('|', '/')} |")
    if len(rows) > MAX_NOTE_ROWS:
        lines.append(f"\n{len(rows) - MAX_NOTE_ROWS} more in results.json (`round_notes`).")
    return lines


def plot(results: Sequence[TaskResult], path: Path) -> bool:
    """Fix rate against cost per strategy, as a PNG; False when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    table = summary(results)
    figure, axes = plt.subplots(figsize=(6, 4))
    for name, row in table.items():
        axes.scatter(row["cost"], row["fix_rate"] * 100)
        axes.annotate(name, (row["cost"], row["fix_rate"] * 100), textcoords="offset points", xytext=(5, 5))
    axes.set_xlabel("cost (US$)")
    axes.set_ylabel("fix rate (%)")
    axes.set_title("coderefine bench: fix rate against cost")
    axes.grid(True, alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return True


def write_reports(results: Sequence[TaskResult], meta: Mapping[str, Any], folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    from coderefine.bench.html import render_html

    written = [folder / "results.json", folder / "results.md", folder / "results.html"]
    written[0].write_text(json.dumps(results_data(results, meta), indent=2), encoding="utf-8")
    written[1].write_text(markdown(results, meta), encoding="utf-8")
    written[2].write_text(render_html(results, meta), encoding="utf-8")
    if plot(results, folder / "fix-rate-vs-cost.png"):
        written.append(folder / "fix-rate-vs-cost.png")
    return written
