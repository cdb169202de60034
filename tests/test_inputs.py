"""Awkward inputs through a whole ``fix``: bytes outside the edited lines stay byte for byte."""

from __future__ import annotations

import codecs
import io
import json
import os
from pathlib import Path

import pytest

from coderefine.cli.main import main
from tests.conftest import RepoFactory, write_files
from tests.refiner.test_loop import PASS, revise

CASES: dict[str, tuple[bytes, str, str]] = {
    # name: (file bytes, SEARCH line as the model writes it, its replacement)
    "crlf": (
        b"def add(a, b):\r\n    return a - b\r\n\r\n\r\nX = 1\r\n",
        "    return a - b",
        "    return a + b",
    ),
    "tabs": (b"def add(a, b):\n\treturn a - b\n\n\nX = 1\n", "\treturn a - b", "\treturn a + b"),
    "bom": (
        codecs.BOM_UTF8 + "def add(a, b):\n    return a - b  # é\n".encode(),
        "    return a - b  # é",
        "    return a + b  # é",
    ),
    "latin-1": (
        "# -*- coding: latin-1 -*-\nNAME = 'café'\n\n\ndef add(a, b):\n    return a - b\n".encode("latin-1"),
        "    return a - b",
        "    return a + b",
    ),
    "long lines": (
        ("LONG = '" + "x" * 20_000 + "'\n\n\ndef add(a, b):\n    return a - b\n").encode(),
        "    return a - b",
        "    return a + b",
    ),
    "no final newline": (b"def add(a, b):\n    return a - b", "    return a - b", "    return a + b"),
    "mixed endings": (
        b"A = 1\r\nB = 2\n\n\ndef add(a, b):\n    return a - b\r\n",
        "    return a - b",
        "    return a + b",
    ),
}


def expected_bytes(original: bytes, search: str, replace: str, name: str) -> bytes:
    encoding = "latin-1" if name == "latin-1" else "utf-8"
    return original.replace(search.encode(encoding), replace.encode(encoding), 1)


def run_fix(root: Path, path: str, replies: list[tuple[str, object]], *args: str) -> tuple[int, str]:
    replay = root.parent / "replay.jsonl"
    replay.write_text(
        "\n".join(
            json.dumps({"role": r, "reply": {"tool_input": a} if isinstance(a, dict) else {"text": a}})
            for r, a in replies
        )
        + "\n"
    )
    cwd = Path.cwd()
    os.chdir(root)
    out = io.StringIO()
    try:
        code = main(["fix", path, "--no-tests", "--model", f"replay:{replay}", *args], out=out)
    finally:
        os.chdir(cwd)
    return code, out.getvalue()


@pytest.mark.parametrize("name", sorted(CASES))
def test_only_the_edited_line_changes(tmp_path: Path, name: str, make_repo: RepoFactory) -> None:
    original, search, replace = CASES[name]
    root = make_repo({"m.py": b"X = 0\n"})
    write_files(root, {"m.py": original})
    edit = f"m.py\n```python\n<<<<<<< SEARCH\n{search}\n=======\n{replace}\n>>>>>>> REPLACE\n```\n"
    issue = {
        "title": "subtracts",
        "severity": "error",
        "path": "m.py",
        "line": 2,
        "evidence": search.strip(),
        "suggestion": "add",
    }
    code, out = run_fix(
        root,
        "m.py",
        [
            ("critic", {"verdict": "revise", "summary": "", "issues": [issue]}),
            ("reviser", edit),
            ("critic", PASS),
        ],
    )
    assert code == 0, out
    assert (root / "m.py").read_bytes() == expected_bytes(original, search, replace, name)


def test_an_empty_file_can_be_drafted(tmp_path: Path, make_repo: RepoFactory) -> None:
    root = make_repo({"m.py": b"X = 0\n"})
    write_files(root, {"empty.py": b""})
    author = "empty.py\n```python\n<<<<<<< SEARCH\n=======\nY = 1\n>>>>>>> REPLACE\n```\n"
    replay = tmp_path / "draft.jsonl"
    replay.write_text(
        json.dumps({"role": "author", "reply": {"text": author}})
        + "\n"
        + json.dumps({"role": "critic", "reply": {"tool_input": PASS}})
        + "\n"
    )
    cwd = Path.cwd()
    os.chdir(root)
    try:
        code = main(
            ["draft", "empty.py", "--intent", "a constant", "--no-tests", "--model", f"replay:{replay}"],
            out=io.StringIO(),
        )
    finally:
        os.chdir(cwd)
    assert code == 0
    assert (root / "empty.py").read_bytes() == b"Y = 1\n"


def test_a_file_with_a_syntax_error_can_be_fixed(tmp_path: Path, make_repo: RepoFactory) -> None:
    root = make_repo({"m.py": b"X = 0\n"})
    write_files(root, {"m.py": b"def add(a, b)\n    return a + b\n"})
    edit = "m.py\n```python\n<<<<<<< SEARCH\ndef add(a, b)\n=======\ndef add(a, b):\n>>>>>>> REPLACE\n```\n"
    code, out = run_fix(
        root, "m.py", [("critic", revise("def add(a, b)")), ("reviser", edit), ("critic", PASS)]
    )
    assert "syntax-error" not in out.split("stopped:")[1]
    assert code == 0, out
    assert (root / "m.py").read_bytes() == b"def add(a, b):\n    return a + b\n"


def test_stub_files_are_reviewed(tmp_path: Path, make_repo: RepoFactory) -> None:
    root = make_repo({"m.pyi": b"def add(a: int, b: int) -> int: ...\n"})
    write_files(root, {"m.pyi": b"def add(a: int, b: int) -> str: ...\n"})
    edit = "m.pyi\n```python\n<<<<<<< SEARCH\ndef add(a: int, b: int) -> str: ...\n=======\ndef add(a: int, b: int) -> int: ...\n>>>>>>> REPLACE\n```\n"
    issue = {
        "title": "wrong return type",
        "severity": "error",
        "path": "m.pyi",
        "line": 1,
        "evidence": "-> str",
        "suggestion": "int",
    }
    code, out = run_fix(
        root,
        "m.pyi",
        [
            ("critic", {"verdict": "revise", "summary": "", "issues": [issue]}),
            ("reviser", edit),
            ("critic", PASS),
        ],
    )
    assert code == 0, out
    assert (root / "m.pyi").read_bytes() == b"def add(a: int, b: int) -> int: ...\n"


def test_notebooks_are_refused_clearly(
    tmp_path: Path, make_repo: RepoFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_repo({"nb.ipynb": b"{}"})
    code, _ = run_fix(root, "nb.ipynb", [])
    assert code == 2
    assert "notebooks are not supported" in capsys.readouterr().err
    assert (root / "nb.ipynb").read_bytes() == b"{}"


def test_a_missing_interpreter_is_reported_missing_never_clean(
    tmp_path: Path, make_repo: RepoFactory
) -> None:
    root = make_repo(
        {
            "m.py": b"def add(a, b):\n    return a + b\n",
            "test_m.py": b"from m import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
        }
    )
    write_files(root, {"m.py": b"def add(a, b):\n    return b + a\n"})
    replay = root.parent / "r.jsonl"
    replay.write_text(
        json.dumps({"role": "critic", "reply": {"tool_input": PASS}})
        + "\n"
        + json.dumps({"role": "reviser", "reply": {"text": "Nothing to change."}})
        + "\n"
    )
    cwd = Path.cwd()
    os.chdir(root)
    out = io.StringIO()
    try:
        code = main(
            ["fix", "m.py", "--python", str(tmp_path / "no-python"), "--model", f"replay:{replay}"], out=out
        )
    finally:
        os.chdir(cwd)
    text = out.getvalue()
    assert code == 1
    assert "pytest unavailable" in text and "missing: pytest" in text
    assert "the critic passed" not in text
