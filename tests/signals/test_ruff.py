from pathlib import Path

import pytest

from coderefine.project.runner import SubprocessRunner
from coderefine.signals import ruff as ruff_module
from coderefine.signals.ruff import RuffSignals, find_ruff, format_signals, has_ruff_config

SELECT = ("E4", "E7", "E9", "F", "B")


def collect(root: Path, files: dict[str, str], with_format: bool = True) -> list[tuple[str, str, int]]:
    result = RuffSignals(SubprocessRunner(), SELECT, with_format).collect(root, files)
    assert all(s.state == "ok" for s in result.statuses)
    return [(s.source, s.code, s.line) for s in result.signals]


def test_real_ruff_reports_diagnostics_with_fix_info(tmp_path: Path) -> None:
    result = RuffSignals(SubprocessRunner(), SELECT).collect(tmp_path, {"m.py": "import os\nx = undefined\n"})
    by_code = {s.code: s for s in result.signals if s.source == "ruff"}
    assert by_code["F401"].fixable and by_code["F401"].anchor == "import os"
    assert by_code["F821"].severity == "error"
    assert by_code["F401"].severity == "warning"


def test_default_selection_is_used_without_project_config(tmp_path: Path) -> None:
    # E501 (line too long) is not in the default selection.
    assert collect(tmp_path, {"m.py": "x = '" + "a" * 120 + "'\n"}, with_format=False) == []


def test_project_configuration_wins(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.ruff.lint]\nselect = ['E501']\n", encoding="utf-8")
    assert has_ruff_config(tmp_path, "m.py")
    found = collect(tmp_path, {"m.py": "import os\nx = '" + "a" * 120 + "'\n"}, with_format=False)
    assert found == [("ruff", "E501", 2)]


def test_format_signal_for_lines_ruff_would_rewrite(tmp_path: Path) -> None:
    found = collect(tmp_path, {"m.py": "x=1\ny = 2\n"})
    assert ("format", "format", 1) in found


def test_syntax_errors_are_left_to_the_syntax_source(tmp_path: Path) -> None:
    assert collect(tmp_path, {"m.py": "def f(:\n"}) == []


def test_format_signals_for_an_insertion_and_a_rewrite() -> None:
    diff = "--- m.py\n+++ m.py\n@@ -1,4 +1,6 @@\n import os\n+\n+\n def f():\n-    x=1\n-    y=2\n+    x = 1\n+    y = 2\n"
    signals = format_signals("m.py", "import os\ndef f():\n    x=1\n    y=2\n", diff)
    assert [(s.line, s.end_line) for s in signals] == [(2, 2), (3, 4)]
    assert signals[1].detail == "    x = 1\n    y = 2"
    assert signals[1].message == "ruff format would rewrite lines 3-4"


def test_missing_ruff_is_reported_as_unavailable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ruff_module, "find_ruff", lambda: None)
    result = RuffSignals(SubprocessRunner(), SELECT).collect(tmp_path, {"m.py": "x = 1\n"})
    assert {s.state for s in result.statuses} == {"unavailable"}
    assert "pip install ruff" in result.statuses[0].note


def test_crashing_ruff_is_reported_as_unavailable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "ruff"
    fake.write_text("#!/bin/sh\necho boom >&2\nexit 2\n", encoding="utf-8")
    fake.chmod(0o755)
    monkeypatch.setattr(ruff_module, "find_ruff", lambda: str(fake))
    result = RuffSignals(SubprocessRunner(), SELECT).collect(tmp_path, {"m.py": "x = 1\n"})
    assert result.statuses[0].state == "unavailable"
    assert "boom" in result.statuses[0].note


def test_find_ruff_finds_the_installed_package() -> None:
    found = find_ruff()
    assert found is not None and Path(found).name.startswith("ruff")
