"""Format work across edits: old debt that moves is not new; only the lines a change touched count."""

import io
import json
from pathlib import Path

import pytest

from coderefine.cli import main
from tests.conftest import RepoFactory, write_files

# Two runs of old format debt, far apart, in a file whose tests pass.
DEBT = "def add(a,b):\n    return a+b\n\n\ndef mul(a, b):\n    return a * b\n\n\nTABLE = {  'a':1}\n"
PROJECT: dict[str, str | bytes] = {
    "pkg/__init__.py": "",
    "pkg/mod.py": DEBT,
    "tests/test_mod.py": "from pkg.mod import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
}


def check_json(root: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, list[dict[str, object]]]:
    monkeypatch.chdir(root)
    out = io.StringIO()
    main(["check", "pkg/mod.py", "--format", "json", "--fail-on", "info"], out=out)
    data: dict[str, list[dict[str, object]]] = json.loads(out.getvalue())
    return data


def test_old_format_debt_that_moves_down_is_not_introduced(
    make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(PROJECT)
    write_files(root, {"pkg/mod.py": "# a comment\n" + DEBT})
    data = check_json(root, monkeypatch)
    assert [s for s in data["introduced"] if s["source"] == "format"] == []
    assert data["fixed"] == []
    assert len([s for s in data["existing"] if s["source"] == "format"]) == 2


def test_only_format_work_on_touched_lines_is_introduced(
    make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(PROJECT)
    # A badly formatted new line, and a change at the end that moves nothing above it.
    write_files(root, {"pkg/mod.py": DEBT.replace("    return a * b\n", "    return  a*b\n")})
    data = check_json(root, monkeypatch)
    introduced = [s for s in data["introduced"] if s["source"] == "format"]
    assert [s["line"] for s in introduced] == [6]
    assert len([s for s in data["existing"] if s["source"] == "format"]) == 2


def test_editing_a_badly_formatted_line_that_stays_so_is_not_introduced(
    make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(PROJECT)
    write_files(root, {"pkg/mod.py": DEBT.replace("return a+b", "return a+b+0")})
    data = check_json(root, monkeypatch)
    assert [s for s in data["introduced"] if s["source"] == "format"] == []
    assert data["fixed"] == []
