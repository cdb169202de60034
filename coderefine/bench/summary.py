"""The figures of a benchmark run, per strategy: fix rates with their intervals, by task kind, shape,
intent strength and mutation; what it did to correct code; tokens and cost per task and per fixed task;
and pairwise comparisons on the same tasks."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from coderefine.bench.result import TaskResult
from coderefine.bench.stats import compare, grouped, wilson

# Correct code: measured by what a strategy did to it, not by a fix rate.
UNSCORED = ("clean", "review-clean")
DIMENSIONS: dict[str, Callable[[TaskResult], str]] = {
    "kind": lambda r: r.kind,
    "shape": lambda r: r.shape,
    "strength": lambda r: r.strength,
    "mutation": lambda r: r.mutation,
}


def summary(results: Sequence[TaskResult]) -> dict[str, Any]:
    """Per strategy: fix rate (overall with a 95% interval, and by kind, shape, strength, mutation and
    bug type), changes to correct code, rounds, tokens, cost, time, rejections, regressions."""
    by_strategy: dict[str, list[TaskResult]] = {}
    for result in results:
        by_strategy.setdefault(result.strategy, []).append(result)
    table: dict[str, Any] = {}
    for name, rows in by_strategy.items():
        # A flaky task (its two scoring runs disagreed) is neither fixed nor failed: it is reported apart.
        scored = [r for r in rows if r.kind not in UNSCORED and not r.flaky]
        clean = [r for r in rows if r.kind == "clean" and not r.flaky]
        fixed = sum(r.fixed for r in scored)
        low, high = wilson(fixed, len(scored))
        row: dict[str, Any] = {
            "tasks": len(scored),
            "fixed": fixed,
            "fix_rate": fixed / len(scored) if scored else 0.0,
            "fix_rate_95": [low, high],
            "by_bug_type": {
                k: s / n for k, (s, n) in grouped([(r.bug_type, r.fixed) for r in scored]).items()
            },
        }
        for dimension, key in DIMENSIONS.items():
            row[f"by_{dimension}"] = {
                k: {"fixed": s, "tasks": n, "rate": s / n, "rate_95": list(wilson(s, n))}
                for k, (s, n) in grouped([(key(r), r.fixed) for r in scored if key(r)]).items()
            }
        tokens = sum(r.input_tokens + r.output_tokens for r in rows)
        cost = sum(r.cost for r in rows)
        row |= {
            "mean_rounds": sum(r.rounds for r in rows) / len(rows),
            "input_tokens": sum(r.input_tokens for r in rows),
            "output_tokens": sum(r.output_tokens for r in rows),
            "cache_read_tokens": sum(r.cache_read_tokens for r in rows),
            "cache_write_tokens": sum(r.cache_write_tokens for r in rows),
            "cost": cost,
            "tokens_per_task": tokens / len(rows),
            "cost_per_task": cost / len(rows),
            "tokens_per_fixed": tokens / fixed if fixed else None,
            "cost_per_fixed": cost / fixed if fixed else None,
            "seconds": sum(r.seconds for r in rows),
            "seconds_per_task": sum(r.seconds for r in rows) / len(rows),
            "edit_formats": sorted({r.edit_format for r in rows if r.edit_format}),
            "gate_rejections": sum(r.gate_rejections for r in rows),
            "regressions": sum(r.regression for r in rows if not r.flaky),
            "reruns": sum(r.reruns for r in rows),
            "flaky": sum(r.flaky for r in rows),
            "flaky_tasks": [r.task_id for r in rows if r.flaky],
            "errors": sum(bool(r.error) for r in rows),
            "changed": sum(r.changed for r in rows),
            "lines_changed": sum(r.lines_changed for r in rows),
            "by_model": _by_model(rows),
        }
        if clean:
            row["clean"] = {
                "tasks": len(clean),
                "changed": sum(r.changed for r in clean),
                "lines_changed": sum(r.lines_changed for r in clean),
                "broken": sum(r.regression for r in clean),
            }
        reviews = [r for r in rows if r.kind in ("review", "review-clean")]
        if reviews:
            row["review"] = review_figures(reviews)
        table[name] = row
    return table


def review_figures(rows: Sequence[TaskResult]) -> dict[str, Any]:
    """``coderefine review`` on pull requests: catch rate (an error-level finding on the mutant's lines)
    with its interval, false alarms per clean change, and the fixes tried, verified and fixing."""
    bugs = [r for r in rows if r.kind == "review"]
    clean = [r for r in rows if r.kind == "review-clean"]
    caught = sum(r.caught for r in bugs)
    alarms = sum(r.false_alarms for r in clean)
    return {
        "tasks": len(bugs),
        "caught": caught,
        "catch_rate": caught / len(bugs) if bugs else 0.0,
        "catch_rate_95": list(wilson(caught, len(bugs))),
        "clean_changes": len(clean),
        "false_alarms": alarms,
        "false_alarms_per_clean": alarms / len(clean) if clean else 0.0,
        "clean_flagged": sum(r.false_alarms > 0 for r in clean),
        # Suggestions offered on a clean rewrite: each one asks the author to change correct code.
        "clean_suggestions": sum(r.verified for r in clean),
        "clean_with_suggestion": sum(r.verified > 0 for r in clean),
        "false_alarms_beside_bugs": sum(r.false_alarms for r in bugs),
        "fixes_tried": sum(r.fixes_tried for r in rows),
        "verified": sum(r.verified for r in rows),
        "verified_fixing": sum(r.verified_fixing for r in bugs),
    }


def comparisons(results: Sequence[TaskResult]) -> list[dict[str, Any]]:
    """McNemar's exact test for every pair of strategies, on the scored tasks both ran."""
    fixed: dict[str, dict[str, bool]] = {}
    for r in results:
        if r.kind not in UNSCORED and not r.flaky:
            fixed.setdefault(r.strategy, {})[r.task_id] = r.fixed
    return [
        {
            "first": c.first,
            "second": c.second,
            "tasks": c.tasks,
            "only_first": c.only_first,
            "only_second": c.only_second,
            "p_value": c.p_value,
            "verdict": c.verdict,
        }
        for c in compare(fixed)
    ]


def _by_model(rows: Sequence[TaskResult]) -> dict[str, dict[str, float]]:
    """Tokens and cost per "role model" over ``rows`` (a mixed strategy has one entry per role's model)."""
    totals: dict[str, dict[str, float]] = {}
    for row in rows:
        for charge in row.models:
            entry = totals.setdefault(f"{charge['role']} {charge['model']}", {"tokens": 0, "cost": 0.0})
            entry["tokens"] += charge["tokens"]
            entry["cost"] += charge["cost"]
    return totals
