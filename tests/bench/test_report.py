import json
from pathlib import Path

from coderefine.bench.harness import TaskResult
from coderefine.bench.report import markdown, write_reports


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
