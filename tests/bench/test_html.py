"""results.html: its figures are summary()'s, it loads nothing from outside, and it renders in a real
headless Chromium with its plots (a screenshot is taken; the task filter runs)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from coderefine.bench.html import cost_points, render_html
from coderefine.bench.report import write_reports
from coderefine.bench.result import TaskResult
from coderefine.bench.stats import rate_cell
from coderefine.bench.summary import summary


def run(
    task: str,
    strategy: str,
    fixed: bool,
    *,
    kind: str = "bug",
    strength: str = "strong",
    cost: float = 0.02,
    changed: bool = False,
    before: bool = False,
) -> TaskResult:
    return TaskResult(
        task,
        "value misuse",
        strategy,
        "claude-sonnet-5-5",
        before,
        fixed,
        1,
        1000,
        100,
        0,
        0,
        cost,
        2.0,
        0,
        "critic passed",
        kind=kind,
        shape="single" if kind != "clean" else "",
        strength=strength,
        mutation="constant",
        changed=changed,
        lines_changed=3 if changed else 0,
    )


def results() -> list[TaskResult]:
    rows = []
    for strategy, fixes, price in (
        ("one-shot", (1, 0, 0, 1), 0.01),
        ("coderefine@claude-haiku-4-5", (1, 1, 0, 1), 0.03),
    ):
        for i, fixed in enumerate(fixes):
            rows.append(
                run(f"lib/bug-{i}", strategy, bool(fixed), strength=("weak", "strong")[i % 2], cost=price)
            )
        rows.append(run("lib/feature-0", strategy, strategy != "one-shot", kind="feature", cost=price))
        rows.append(run("lib/clean-0", strategy, True, kind="clean", changed=True, before=True, cost=price))
        rows.append(
            run("lib/clean-1", strategy, strategy != "one-shot", kind="clean", before=True, cost=price)
        )
    rows.append(run("<script>alert(1)</script>", "one-shot", False))  # escaped, never run
    return rows


META = {"suite": "libraries", "model": "claude-sonnet-5-5"}


def test_the_page_holds_every_plot_and_summarys_numbers() -> None:
    page = render_html(results(), META)
    for plot in ("plot-cost", "plot-kind", "plot-strength", "plot-clean"):
        assert f'<svg id="{plot}"' in page
    table = summary(results())
    for row in table.values():  # each fix rate, as results.md shows it
        assert rate_cell(row["fixed"], row["tasks"]) in page
    assert "4/5 80% [38-96]" in page
    assert f"${table['one-shot']['cost_per_fixed']:.4f}" in page
    assert "one-shot (claude-sonnet-5-5)" in page and "coderefine@claude-haiku-4-5" in page
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_the_page_is_self_contained() -> None:
    page = render_html(results(), META)
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "<link" not in page and "@import" not in page and "url(" not in page
    assert not re.search(r"<script[^>]+src", page)
    # The only URL is the SVG namespace, which is a name, never fetched.
    assert set(re.findall(r"https?://[^\s\"'<>]+", page)) == {"http://www.w3.org/2000/svg"}


def test_cost_interval_follows_the_fix_counts_interval() -> None:
    table = summary(results())
    point = next(p for p in cost_points(table, results()) if p.label.startswith("coderefine"))
    assert point.x_low is not None and point.x_high is not None
    assert point.x_low <= point.x <= point.x_high
    assert point.y_low is not None and point.y_high is not None and point.y_low <= point.y <= point.y_high


def test_nothing_fixed_says_so_instead_of_a_plot() -> None:
    page = render_html([run("lib/bug-0", "one-shot", False)], META)
    assert 'id="plot-cost"' not in page and "No strategy fixed a task" in page
    assert "This suite has no clean tasks" in page


def test_bench_writes_results_html_beside_the_others(tmp_path: Path) -> None:
    written = write_reports(results(), META, tmp_path)
    assert tmp_path / "results.html" in written
    assert (tmp_path / "results.html").read_text().startswith("<!DOCTYPE html>")


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    reason = "needs Chromium (apt-get install -y --no-install-recommends chromium); .ci/run installs it"
    if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
        pytest.fail(f"CI is set and Chromium is missing: {reason}")
    pytest.skip(reason)


def headless(browser: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--disable-dev-shm-usage",
            f"--user-data-dir={profile}",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_results_html_renders_in_chromium_with_its_plots(tmp_path: Path) -> None:
    browser = chromium()
    write_reports(results(), META, tmp_path)
    page = (tmp_path / "results.html").as_uri()

    dom = headless(browser, tmp_path / "profile-dom", "--virtual-time-budget=5000", "--dump-dom", page)
    assert dom.returncode == 0, dom.stderr[-2000:]
    rendered = dom.stdout
    for plot in ("plot-cost", "plot-kind", "plot-strength", "plot-clean"):
        assert f'id="{plot}"' in rendered, plot
    assert rendered.count("<circle") == 2 and rendered.count('class="bar"') >= 8
    assert "15 of 15 tasks shown" in rendered  # the page's own script ran

    filtered = headless(
        browser,
        tmp_path / "profile-filter",
        "--virtual-time-budget=5000",
        "--dump-dom",
        page + "#filter=clean",
    )
    assert "4 of 15 tasks shown" in filtered.stdout

    shot = tmp_path / "results.png"
    done = headless(
        browser, tmp_path / "profile-shot", f"--screenshot={shot}", "--window-size=1100,2400", page
    )
    assert done.returncode == 0, done.stderr[-2000:]
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 20_000
