"""The `bench` and `bench make-suite` command lines: errors that say what to do, and a local suite end to end."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from coderefine.cli.main import main
from tests.bench.test_build import make_project


def run(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    return main(argv, out=out), out.getvalue()


def test_make_suite_needs_one_source(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = run(["bench", "make-suite", "-o", str(tmp_path / "s")])
    assert code == 2
    assert "either NAME==VERSION or --from PATH" in capsys.readouterr().err
    code, _ = run(["bench", "make-suite", "x==1", "--from", ".", "-o", str(tmp_path / "s")])
    assert code == 2


def test_make_suite_wants_a_pinned_version(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = run(["bench", "make-suite", "humanize", "-o", str(tmp_path / "s")])
    assert code == 2
    assert "give NAME==VERSION" in capsys.readouterr().err
    assert not (tmp_path / "s").exists()


def test_unknown_suite_and_strategy_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = run(["bench", "--suite", str(tmp_path / "none"), "--out", str(tmp_path / "o")])
    assert code == 2
    assert "not a suite" in capsys.readouterr().err
    code, _ = run(["bench", "--suite", "humanevalfix", "--strategies", "coderefine@"])
    assert code == 2
    assert "name a model after the @" in capsys.readouterr().err


def test_a_local_suite_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = make_project(tmp_path / "proj")
    code, text = run(
        ["bench", "make-suite", "--from", str(project), "--tasks", "4", "-o", str(tmp_path / "s")]
    )
    assert code == 0, text
    # Counted by kind, shapes on a line of their own; the hint runs the review tasks too.
    wrote = text.splitlines()
    assert re.fullmatch(r"wrote \S+: \d+ tasks: \d+ bug, .*\d+ review, \d+ review-clean", wrote[0]), text
    assert wrote[1].startswith("shapes: bug: ") and "review: " in wrote[1]
    assert wrote[2].endswith("--strategies one-shot,coderefine,review")
    argv = ["bench", "--suite", str(tmp_path / "s"), "--model", "do-nothing", "--strategies", "one-shot"]
    capsys.readouterr()
    code, text = run([*argv, "--out", str(tmp_path / "out"), "--limit", "2", "--jobs", "1"])
    assert code == 0
    assert "| one-shot | 0/2 0%" in text
    # Each pair says when it starts and when it ends: a small local model's pair can take half an hour.
    # One line per event, a pair's end before the next one's start.
    err = capsys.readouterr().err
    progress = [line for line in err.splitlines() if "one-shot" in line]
    assert [line.split()[1] for line in progress] == ["started", "[1/2]", "started", "[2/2]"], progress
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    assert all(row["changed"] is False and row["lines_changed"] == 0 for row in data["tasks"])
    assert data["comparisons"] == []
    argv = ["bench", "--suite", str(tmp_path / "s"), "--model", "oracle", "--strategies", "one-shot"]
    code, text = run([*argv, "--out", str(tmp_path / "out2"), "--limit", "2"])
    assert code == 0
    assert "| one-shot | 2/2 100%" in text


def test_a_pair_is_told_in_its_familys_words(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from coderefine.cli.commands.bench import outcome_word

    def result(**fields: object) -> SimpleNamespace:
        base = {"error": "", "kind": "bug", "passed_after": False, "changed": False, "caught": False}
        return SimpleNamespace(**{**base, "fixed": fields.get("passed_after", False), **fields})

    assert outcome_word(result(kind="clean", passed_after=True)) == "kept (correct)"
    assert outcome_word(result(kind="clean", passed_after=True, changed=True)) == "changed, still correct"
    assert outcome_word(result(kind="clean", changed=True)) == "broken (correct code now fails)"
    assert outcome_word(result(kind="review", caught=True, passed_after=True)) == "caught"
    assert outcome_word(result(kind="review-clean", passed_after=True, false_alarms=0)) == "no false alarm"
    assert outcome_word(result(kind="review-clean", false_alarms=2)) == "2 false alarms"
    assert outcome_word(result(passed_after=True)) == "fixed"
    assert outcome_word(result(error="boom")) == "error: boom"


def test_help_has_single_percent_signs(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        run(["bench", "--help"])
    shown = capsys.readouterr().out
    assert "100%" in shown and "%%" not in shown


def test_the_tasks_no_chosen_strategy_runs_are_said() -> None:
    from coderefine.cli.commands.bench import _unrun

    tasks = [SimpleNamespace(kind=k) for k in ("bug", "clean", "review", "review-clean")]
    loop, review = SimpleNamespace(review=False), SimpleNamespace(review=True)
    assert _unrun(tasks, [loop]) == [
        "2 review tasks (review and review-clean) not run: run them with --strategies review (they run "
        "through coderefine review, not the fix loop)"
    ]
    assert _unrun(tasks, [review]) == ["2 tasks not run: the review strategy runs only the review tasks"]
    assert _unrun(tasks, [loop, review]) == []
