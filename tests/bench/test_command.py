"""The `bench` and `bench make-suite` command lines: errors that say what to do, and a local suite end to end."""

from __future__ import annotations

import io
import json
from pathlib import Path

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
    assert "wrote" in text
    argv = ["bench", "--suite", str(tmp_path / "s"), "--model", "do-nothing", "--strategies", "one-shot"]
    capsys.readouterr()
    code, text = run([*argv, "--out", str(tmp_path / "out"), "--limit", "2"])
    assert code == 0
    assert "| one-shot | 0/2 0%" in text
    # Each pair says when it starts and when it ends: a small local model's pair can take half an hour.
    progress = capsys.readouterr().err
    assert progress.count("coderefine: started one-shot ") == 2 and progress.count("[2/2] one-shot") == 1
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    assert all(row["changed"] is False and row["lines_changed"] == 0 for row in data["tasks"])
    assert data["comparisons"] == []
    argv = ["bench", "--suite", str(tmp_path / "s"), "--model", "oracle", "--strategies", "one-shot"]
    code, text = run([*argv, "--out", str(tmp_path / "out2"), "--limit", "2"])
    assert code == 0
    assert "| one-shot | 2/2 100%" in text
