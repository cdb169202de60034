import json
from dataclasses import replace
from pathlib import Path

from coderefine.bench.merge import result_of
from coderefine.bench.report import markdown, write_reports
from coderefine.bench.result import NOTE_CHARS, TaskResult, round_note


def result(strategy: str, fixed: bool, bug: str = "value misuse") -> TaskResult:
    return TaskResult(
        "Python/1", bug, strategy, "m", False, fixed, 1, 100, 10, 50, 20, 0.01, 1.0, 0, "passed", mutation=bug
    )


def test_markdown_and_json(tmp_path: Path) -> None:
    results = [
        result("one-shot", False),
        result("coderefine", True),
        result("coderefine", False, "excess logic"),
    ]
    text = markdown(results, {"suite": "s", "model": "m"})
    assert "| coderefine | 1/2 50% [9-91] |" in text
    assert "| one-shot | 0/1 0% [0-79] |" in text
    assert "excess logic" in text
    written = write_reports(results, {"suite": "s", "model": "m"}, tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["summary"]["coderefine"]["fixed"] == 1
    assert len(data["tasks"]) == 3
    assert tmp_path / "results.md" in written


def review_result(kind: str, caught: bool, alarms: int, verified: int, fixing: int) -> TaskResult:
    clean = kind == "review-clean"
    return TaskResult(
        f"lib/{kind}-000",
        kind,
        "review",
        "m",
        clean,
        clean or caught,
        1,
        100,
        10,
        0,
        0,
        0.01,
        1.0,
        0,
        "reviewed",
        kind=kind,
        shape="rename",
        strength="refactor",
        mutation="none" if clean else "constant",
        caught=caught,
        false_alarms=alarms,
        fixes_tried=verified + 1,
        verified=verified,
        verified_fixing=fixing,
    )


def test_review_metrics_reach_the_table_and_results_json(tmp_path: Path) -> None:
    results = [
        review_result("review", True, 0, 1, 1),
        review_result("review", False, 1, 1, 0),
        review_result("review-clean", False, 2, 2, 0),
        review_result("review-clean", False, 0, 0, 0),
    ]
    text = markdown(results, {"suite": "s", "model": "m"})
    assert "| review | 1/2 50% [9-91] | 1.00 (2 on 2) | 8 | 4 | 1 | 1 of 2 (2 offered) |" in text
    write_reports(results, {"suite": "s", "model": "m"}, tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    review = data["summary"]["review"]["review"]
    assert (review["caught"], review["tasks"], review["false_alarms_per_clean"]) == (1, 2, 1.0)
    assert review["clean_flagged"] == 1 and review["false_alarms_beside_bugs"] == 1
    # Suggestions offered on correct rewrites are their own figure.
    assert (review["clean_with_suggestion"], review["clean_suggestions"]) == (1, 2)
    assert data["summary"]["review"]["tasks"] == 2  # negatives are not scored
    assert {t["caught"] for t in data["tasks"]} == {True, False}


def test_flaky_tasks_are_reported_apart_not_as_failures(tmp_path: Path) -> None:
    steady = replace(result("coderefine", True), task_id="lib/001", reruns=1)
    flaky = replace(result("coderefine", True), task_id="lib/002", reruns=1, flaky=True)
    failed = replace(result("coderefine", False), task_id="lib/003", reruns=2)
    results = [steady, flaky, failed, replace(flaky, strategy="one-shot", passed_after=False)]
    text = markdown(results, {"suite": "s", "model": "m"})
    assert "| coderefine | 1/2 50% [9-91] |" in text  # the flaky task is neither fixed nor failed
    assert "| coderefine | 4 | 1: lib/002 |" in text
    write_reports(results, {"suite": "s", "model": "m"}, tmp_path)
    data = json.loads((tmp_path / "results.json").read_text())
    row = data["summary"]["coderefine"]
    assert (row["tasks"], row["reruns"], row["flaky"], row["flaky_tasks"]) == (2, 4, 1, ["lib/002"])
    assert data["comparisons"] == []  # the only task both strategies ran was flaky
    assert [t["flaky"] for t in data["tasks"]] == [False, True, False, True]


def test_an_unfixed_tasks_rejected_rounds_say_why_and_survive_the_cache_and_a_merge(tmp_path: Path) -> None:
    note = round_note(1, "gate-failed", "SyntaxError: invalid syntax (task.py, line 4)\n  return a +")
    assert note == "1 gate-failed: SyntaxError: invalid syntax (task.py, line 4)"
    assert len(round_note(2, "edit-failed", "x" * 1000)) == NOTE_CHARS
    unfixed = replace(
        result("coderefine", False), round_notes=(note, "2 no-edits: the reviser changed nothing")
    )
    fixed = replace(result("one-shot", True), round_notes=("0 gate-failed: fixed later",))
    text = markdown([unfixed, fixed], {"suite": "s", "model": "m"})
    assert "| coderefine | Python/1 | 1 gate-failed: SyntaxError: invalid syntax (task.py, line 4) |" in text
    assert "| coderefine | Python/1 | 2 no-edits: the reviser changed nothing |" in text
    assert "fixed later" not in text  # a fixed task's rounds are no puzzle
    write_reports([unfixed], {"suite": "s", "model": "m"}, tmp_path)
    row = json.loads((tmp_path / "results.json").read_text())["tasks"][0]
    assert result_of(row) == unfixed  # bench merge reads the shards' results.json back
