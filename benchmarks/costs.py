"""Tokens: a round against one-shot on one prompt, the call policies on HumanEvalFix and on a real-library
suite, and the context of a one-line fix in a large module."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from benchmarks.common import Row

if TYPE_CHECKING:
    from benchmarks.calls import PolicyFigures


def _token_rows(label: str, before: str, after: str) -> list[Row]:
    import difflib

    from coderefine.refiner.critique import Critique, Issue
    from coderefine.refiner.prompting import PromptBuilder
    from coderefine.signals.base import Comparison, Signal, SourceStatus

    def tokens(text: str) -> float:
        return len(text) / 4  # the usual estimate for English and code; no tokenizer offline

    files = {"pkg/mod.py": after}
    diff = "".join(
        difflib.unified_diff(before.splitlines(True), after.splitlines(True), "a/pkg/mod.py", "b/pkg/mod.py")
    )
    failing = Signal(
        "pytest",
        "tests/test_mod.py",
        4,
        4,
        "tests/test_mod.py::test_add",
        "test failed: assert -1 == 3",
        "error",
        detail="tests/test_mod.py:5: in test_add\n    assert add(1, 2) == 3\nE   assert -1 == 3",
    )
    comparison = Comparison((failing,), (), (), (SourceStatus("pytest", "ok"),))
    critique = Critique(
        "revise",
        "add subtracts",
        (Issue("add subtracts", "error", "pkg/mod.py", 2, 2, "return a - b", "use +"),),
    )
    prompts = PromptBuilder(8192)
    critic = prompts.critic(
        files, intent="add two numbers", diff=diff, changed=["add"], comparison=comparison
    )
    reviser = prompts.reviser(files, intent="add two numbers", critique=critique, comparison=comparison)
    author = prompts.author(files, intent="add two numbers")
    prefix = tokens("".join(b.text for b in critic.system)) + tokens(str(critic.tool))
    suffix_c, suffix_r, suffix_a = (tokens(r.messages[0].text) for r in (critic, reviser, author))
    # Billed input: cache writes cost 1.25x, cache reads 0.1x (docs/protocol.md).
    round_billed = prefix * 1.25 + suffix_c + prefix * 0.1 + suffix_r
    round_sent = 2 * prefix + suffix_c + suffix_r
    one_shot = prefix + suffix_a
    ratio = round_billed / one_shot
    return [
        Row(f"{label}: one-shot (author) input", one_shot, "tok"),
        Row(
            f"{label}: round input sent",
            round_sent,
            "tok",
            "",
            None,
            f"{round_sent / one_shot:.2f}x one-shot",
        ),
        Row(
            f"{label}: round input billed, cached",
            round_billed,
            "tok",
            "<= 1.5x",
            ratio <= 1.5,
            f"{ratio:.2f}x one-shot",
        ),
    ]


def bench_tokens(runs: int) -> list[Row]:
    from benchmarks.fixtures import big_module
    from tests.conftest import SMALL_PROJECT
    from tests.refiner.test_loop import BUGGY

    small_before = str(SMALL_PROJECT["pkg/mod.py"])
    module = big_module(30)
    bigger_before = small_before + module
    bigger_after = BUGGY + module
    lines = bigger_after.count("\n")
    return _token_rows("6-line module", small_before, BUGGY) + _token_rows(
        f"{lines}-line module", bigger_before, bigger_after
    )


def bench_calls(runs: int) -> list[Row]:
    from benchmarks.calls import SEED, measure

    limit = 8 if runs < 7 else 20
    names = ["one-shot", "coderefine", "coderefine-lean", "coderefine-frugal", "coderefine-merged"]
    return _policy_rows(measure(limit, names), "", f"HumanEvalFix seed {SEED}")


def _policy_rows(figures: Sequence[PolicyFigures], label: str, note: str) -> list[Row]:
    """One row per policy: billed input per fixed task, against one-shot's (the first)."""
    base = figures[0].billed_per_fixed
    rows = []
    for f in figures:
        ratio = f.billed_per_fixed / base
        first = f is figures[0]
        rows.append(
            Row(
                f"{f.strategy}: billed input per fixed task{label}",
                f.billed_per_fixed,
                "tok",
                "" if first else "<= 2x",
                None if first else ratio <= 2,
                f"{ratio:.2f}x one-shot; fixed {f.fixed}/{f.tasks}; "
                f"{f.sent_per_task:.0f} sent per task; {note}",
            )
        )
    return rows


def bench_suite_calls(runs: int) -> list[Row]:
    """The same policies on shipped real-library suites' bug, feature and release tasks (built on first
    use into the benchmark cache: a download from the package index and about a minute's build each).
    ``CODEREFINE_SUITE_CALLS`` chooses the suites (comma-separated, as ``coderefine bench --suite`` names
    them: ``humanize==4.11.0``, or a release suite ``boltons==26.1.0->26.2.0``); inflection by default."""
    from benchmarks.calls import measure_tasks
    from benchmarks.large import cache_dir
    from coderefine.bench.manifest import library_suite, load_manifest
    from coderefine.errors import UsageError
    from coderefine.project.runner import SubprocessRunner

    names = ["one-shot", "coderefine", "coderefine-merged"]
    chosen = os.environ.get("CODEREFINE_SUITE_CALLS", SUITE_LIBRARY)
    wanted = [w.strip() for w in chosen.split(",") if w.strip()]
    rows: list[Row] = []
    names_of = [(lib, (lib.name, lib.requirement, lib.label.replace(" ", ""))) for lib in load_manifest()]
    for want in wanted:
        library = next((lib for lib, known in names_of if want in known), None)
        if library is None:
            rows.append(Row(f"{want} suite", 0, "", "", None, "skipped: not in the manifest"))
            continue
        try:
            tasks, _ = library_suite(library, cache_dir() / "suites", SubprocessRunner(), os.environ, print)
        except UsageError as exc:
            rows.append(Row(f"{library.label} suite", 0, "", "", None, f"skipped: {exc}"))
            continue
        scored = [t for t in tasks if t.kind in ("bug", "feature", "release")]
        rows += _policy_rows(measure_tasks(scored, names), f", {library.label}", "oracle")
    return rows


SUITE_LIBRARY = "inflection"


def bench_context(runs: int) -> list[Row]:
    from benchmarks.large import SDIST, context_tokens

    figures = context_tokens()
    if figures is None:
        return [Row("large module context", 0, "", "", None, f"skipped: {SDIST} is not cached")]
    lines, whole, focused = figures
    return [
        Row(
            f"one-line fix in a {lines:,}-line module: whole file", whole, "tok", "", None, "per call, before"
        ),
        Row(
            "  focused excerpts + outline, per call",
            focused,
            "tok",
            "< 6000",
            focused < 6000,
            f"{whole / focused:.1f}x fewer",
        ),
    ]
