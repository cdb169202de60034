"""results.html: one self-contained page of a benchmark run — plots as inline SVG, a filterable task table.

Every figure comes from ``summary()`` (the numbers of results.md and results.json); the page loads
nothing: no network, no external script or style, so it opens offline and can be attached anywhere.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from coderefine.bench.result import TaskResult
from coderefine.bench.stats import rate_cell, wilson
from coderefine.bench.summary import summary
from coderefine.bench.svg import Bar, Point, grouped_bars, scatter

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1000px; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; }
th { background: #f4f4f4; } td.num { text-align: right; }
tr.fixed td.outcome { color: #060; } tr.unfixed td.outcome { color: #a00; }
.note { color: #555; font-size: 0.9em; } .plot { max-width: 100%; height: auto; }
#filters { margin: 0.5em 0; } #filters input, #filters select { margin-right: 1em; }
"""

# Filters the task table in place; inline, so the page needs nothing from outside.
_SCRIPT = """
(function () {
  var text = document.getElementById('filter-text');
  var strategy = document.getElementById('filter-strategy');
  var outcome = document.getElementById('filter-outcome');
  var rows = Array.prototype.slice.call(document.querySelectorAll('#tasks tbody tr'));
  var count = document.getElementById('shown');
  function apply() {
    var needle = text.value.toLowerCase(), shown = 0;
    rows.forEach(function (row) {
      var ok = (!needle || row.textContent.toLowerCase().indexOf(needle) >= 0)
        && (!strategy.value || row.dataset.strategy === strategy.value)
        && (!outcome.value || row.dataset.outcome === outcome.value);
      row.style.display = ok ? '' : 'none';
      if (ok) { shown += 1; }
    });
    count.textContent = shown + ' of ' + rows.length + ' tasks shown';
  }
  [text, strategy, outcome].forEach(function (el) { el.addEventListener('input', apply); });
  // results.html#filter=TEXT opens with the table filtered (a link to the tasks of interest).
  var wanted = /[#&]filter=([^&]*)/.exec(window.location.hash);
  if (wanted) { text.value = decodeURIComponent(wanted[1]); }
  apply();
})();
"""


def _label(name: str, results: Sequence[TaskResult]) -> str:
    """The strategy with its model, unless the name already carries one (NAME@MODEL)."""
    if "@" in name:
        return name
    models = sorted({r.model for r in results if r.strategy == name and r.model})
    return f"{name} ({', '.join(models)})" if models else name


def cost_points(table: Mapping[str, Any], results: Sequence[TaskResult]) -> list[Point]:
    """Fix rate against cost per fixed task; the cost's interval follows from the fix count's."""
    points = []
    for name, row in table.items():
        if not row["tasks"] or row["cost_per_fixed"] is None:
            continue
        low, high = row["fix_rate_95"]
        fixed_low, fixed_high = low * row["tasks"], high * row["tasks"]
        points.append(
            Point(
                _label(name, results),
                row["cost_per_fixed"],
                row["fix_rate"],
                x_low=row["cost"] / fixed_high if fixed_high else None,
                x_high=row["cost"] / fixed_low if fixed_low else None,
                y_low=low,
                y_high=high,
            )
        )
    return points


def rate_bars(
    table: Mapping[str, Any], dimension: str
) -> tuple[list[str], list[tuple[str, list[Bar | None]]]]:
    groups = sorted({g for row in table.values() for g in row[f"by_{dimension}"]})
    series: list[tuple[str, list[Bar | None]]] = []
    for name, row in table.items():
        found = row[f"by_{dimension}"]
        bars: list[Bar | None] = []
        for group in groups:
            cell = found.get(group)
            bars.append(
                None
                if cell is None
                else Bar(
                    cell["rate"], cell["rate_95"][0], cell["rate_95"][1], f"({cell['fixed']}/{cell['tasks']})"
                )
            )
        series.append((name, bars))
    return groups, series


def clean_bars(table: Mapping[str, Any]) -> tuple[list[str], list[tuple[str, list[Bar | None]]]]:
    """Per strategy: the share of correct code it changed, and the share it broke, with intervals."""
    names = [name for name, row in table.items() if "clean" in row]
    changed: list[Bar | None] = []
    broken: list[Bar | None] = []
    for name in names:
        clean = table[name]["clean"]
        n = clean["tasks"]
        for bars, count in ((changed, clean["changed"]), (broken, clean["broken"])):
            low, high = wilson(count, n)
            bars.append(Bar(count / n if n else 0.0, low, high, f"({count}/{n})"))
    return names, [("changed", changed), ("broken", broken)]


def _summary_table(table: Mapping[str, Any], results: Sequence[TaskResult]) -> str:
    columns = ("strategy", "fixed [95% CI]", "cost", "cost / fixed", "regressions")
    head = "<tr>" + "".join(f"<th>{c}</th>" for c in columns) + "</tr>"
    rows = []
    for name, row in table.items():
        per_fixed = "-" if row["cost_per_fixed"] is None else f"${row['cost_per_fixed']:.4f}"
        rows.append(
            f"<tr><td>{escape(_label(name, results))}</td><td>{rate_cell(row['fixed'], row['tasks'])}</td>"
            f"<td class=num>${row['cost']:.2f}</td><td class=num>{per_fixed}</td>"
            f"<td class=num>{row['regressions']}</td></tr>"
        )
    return f'<table id="summary"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>'


def _task_table(results: Sequence[TaskResult]) -> str:
    columns = (
        "task",
        "strategy",
        "kind",
        "shape",
        "strength",
        "mutation",
        "outcome",
        "rounds",
        "cost",
        "stop",
    )
    head = "".join(f"<th>{c}</th>" for c in columns)
    rows = []
    for r in results:
        outcome = "fixed" if r.fixed else ("broken" if r.regression else "not fixed")
        if r.kind in ("clean", "review-clean"):
            outcome = "broken" if r.regression else ("changed" if r.changed else "left alone")
        css = "fixed" if outcome in ("fixed", "left alone") else "unfixed"
        cells = [r.task_id, r.strategy, r.kind, r.shape, r.strength, r.mutation]
        rows.append(
            f'<tr class="{css}" data-strategy="{escape(r.strategy)}" data-outcome="{escape(outcome)}">'
            + "".join(f"<td>{escape(c)}</td>" for c in cells)
            + f'<td class="outcome">{escape(outcome)}</td><td class=num>{r.rounds}</td>'
            f"<td class=num>${r.cost:.4f}</td><td>{escape(r.error or r.stop)}</td></tr>"
        )
    return f'<table id="tasks"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def _options(values: Sequence[str], everything: str) -> str:
    return f'<option value="">{everything}</option>' + "".join(
        f'<option value="{escape(v)}">{escape(v)}</option>' for v in values
    )


def render_html(results: Sequence[TaskResult], meta: Mapping[str, Any]) -> str:
    table = summary(results)
    title = f"coderefine bench: {meta.get('suite', '')} with {meta.get('model', '')}"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        f'<p class="note">{len(results)} task runs. Intervals are 95% Wilson intervals. '
        "The same figures are in results.md and results.json.</p>",
        "<h2>Fix rate against cost per fixed task</h2>",
    ]
    points = cost_points(table, results)
    if points:
        parts.append(
            scatter(
                "plot-cost",
                "fix rate against cost per fixed task",
                points,
                "cost per fixed task (US$)",
                "fix rate",
            )
        )
        parts.append(
            '<p class="note">Vertical bars: the fix rate\'s interval; horizontal: the cost per fixed task if '
            "the fix count were at either end of it. A strategy that fixed nothing has no cost per fix and "
            "is not drawn.</p>"
        )
    else:
        parts.append('<p class="note">No strategy fixed a task: there is no cost per fixed task to draw.</p>')
    parts.append(_summary_table(table, results))
    for dimension, heading in (("kind", "task family"), ("strength", "intent strength"), ("shape", "shape")):
        groups, series = rate_bars(table, dimension)
        if not groups or (dimension == "shape" and len(groups) < 2):
            continue
        parts.append(f"<h2>Fix rate by {heading}</h2>")
        title = f"fix rate by {heading}"
        parts.append(grouped_bars(f"plot-{dimension}", title, groups, series, heading, "fix rate"))
    names, clean = clean_bars(table)
    parts.append("<h2>Correct code: changed and broken</h2>")
    if names:
        parts.append(
            grouped_bars(
                "plot-clean",
                "clean tasks changed and broken",
                names,
                clean,
                "strategy",
                "share of clean tasks",
            )
        )
    else:
        parts.append('<p class="note">This suite has no clean tasks.</p>')
    strategies = sorted({r.strategy for r in results})
    outcomes = sorted({"fixed", "not fixed", "broken", "changed", "left alone"})
    parts += [
        "<h2>Tasks</h2>",
        '<div id="filters"><input id="filter-text" type="search" placeholder="filter tasks">',
        f'<select id="filter-strategy">{_options(strategies, "every strategy")}</select>',
        f'<select id="filter-outcome">{_options(outcomes, "every outcome")}</select>',
        '<span id="shown"></span></div>',
        _task_table(results),
        f"<script>{_SCRIPT}</script>",
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"
