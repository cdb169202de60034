import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from coderefine.cli.main import main
from tests.conftest import SMALL_PROJECT, RepoFactory, git, write_files


def run(argv: list[str], stdin: str = "") -> tuple[int, str]:
    out = io.StringIO()
    code = main(argv, out=out, stdin=io.StringIO(stdin))
    return code, out.getvalue()


def test_version_and_help_without_heavy_imports() -> None:
    probe = (
        "import sys, io\n"
        "from coderefine.cli.main import main\n"
        "for argv in (['--version'], ['--help'], ['check', '--help']):\n"
        "    try:\n        main(argv, out=io.StringIO())\n    except SystemExit:\n        pass\n"
        "heavy = [m for m in ('libcst', 'git', 'anthropic', 'openai', 'boto3', 'httpx2') if m in sys.modules]\n"
        "print(heavy)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_every_command_has_its_function() -> None:
    from coderefine.cli.main import _COMMANDS, command_function
    from coderefine.cli.parser import build_parser

    parser = build_parser()
    choices = next(a.choices for a in parser._actions if a.dest == "command")
    assert choices is not None and set(choices) == set(_COMMANDS)
    assert all(callable(command_function(name)) for name in _COMMANDS)


def test_version_through_the_module() -> None:
    done = subprocess.run([sys.executable, "-m", "coderefine", "--version"], capture_output=True, text=True)
    assert done.returncode == 0
    assert done.stdout.startswith("coderefine ")


def test_check_clean_change_exits_zero(make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_repo(SMALL_PROJECT)
    write_files(root, {"pkg/mod.py": SMALL_PROJECT["pkg/mod.py"] + "\n\ndef sub(a, b):\n    return a - b\n"})
    monkeypatch.chdir(root)
    code, out = run(["check", "pkg/mod.py"])
    assert code == 0, out
    assert "Clean" in out
    assert "pytest ok" in out


def test_check_reports_what_the_change_introduced(
    make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    old_debt = "import sys\n"
    root = make_repo({**SMALL_PROJECT, "pkg/mod.py": old_debt + str(SMALL_PROJECT["pkg/mod.py"])})
    write_files(
        root,
        {"pkg/mod.py": old_debt + "import os\n" + str(SMALL_PROJECT["pkg/mod.py"]).replace("a + b", "a - b")},
    )
    monkeypatch.chdir(root)
    code, out = run(["check", "pkg/mod.py", "--format", "json"])
    data = json.loads(out)
    assert code == 1
    introduced = {(s["source"], s["code"]) for s in data["introduced"]}
    assert ("ruff", "F401") in introduced
    assert ("pytest", "tests/test_mod.py::test_add") in introduced
    # the old F401, and the old format debt below the new import (moved, not introduced)
    assert [(s["code"], s["anchor"]) for s in data["existing"]] == [
        ("F401", "import sys"),
        ("format", "def add(a, b):"),
    ]
    assert data["tests"] == ["tests/test_mod.py"]
    assert data["failed"] is True


def test_check_staged(make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_repo(SMALL_PROJECT)
    write_files(root, {"pkg/mod.py": "import os\n" + str(SMALL_PROJECT["pkg/mod.py"])})
    git(root, "add", "pkg/mod.py")
    write_files(root, {"pkg/mod.py": str(SMALL_PROJECT["pkg/mod.py"])})  # unstaged: the fix
    monkeypatch.chdir(root)
    code, out = run(["check", "--staged", "--no-tests"])
    assert code == 1
    assert "F401" in out


def test_check_patch_from_stdin(make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_repo(SMALL_PROJECT)
    monkeypatch.chdir(root)
    diff = "--- a/pkg/mod.py\n+++ b/pkg/mod.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a + b\n+    return a - b\n"
    code, out = run(["check", "--patch", "-"], stdin=diff)
    assert code == 1
    assert "tests/test_mod.py::test_add" in out
    assert (root / "pkg/mod.py").read_text() == SMALL_PROJECT["pkg/mod.py"]


def test_check_outside_git_reviews_whole_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_files(tmp_path, {"m.py": "import os\n"})
    monkeypatch.chdir(tmp_path)
    code, out = run(["check", "m.py"])
    assert code == 1
    assert out.startswith("coderefine check: 1 file (reviewed whole, outside git)\n")


def test_check_a_folder_reviews_the_python_files_in_it(
    make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(SMALL_PROJECT)
    write_files(root, {"pkg/mod.py": str(SMALL_PROJECT["pkg/mod.py"]).replace("a + b", "a - b")})
    monkeypatch.chdir(root)
    code, out = run(["check", "pkg", "--format", "json"])
    assert code == 1, out
    assert [f["path"] for f in json.loads(out)["change"]["files"]] == ["pkg/__init__.py", "pkg/mod.py"]
    (root / "empty").mkdir()
    code, _ = run(["check", "empty"])
    assert code == 2


def test_without_git_installed_files_are_reviewed_whole(tmp_path: Path) -> None:
    write_files(tmp_path, {"m.py": "import os\n"})
    empty = tmp_path / "empty-path"
    empty.mkdir()
    env = {"PATH": str(empty), "HOME": str(tmp_path)}
    command = [sys.executable, "-m", "coderefine", "check", "m.py", "--no-tests"]
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 1, done.stderr
    assert "F401" in done.stdout and "outside git" in done.stdout
    staged = subprocess.run([*command[:4], "--staged"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert staged.returncode == 2
    assert "git, which is not installed" in staged.stderr


def test_check_syntax_error_is_a_signal_not_a_crash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_files(tmp_path, {"m.py": "def f(:\n"})
    monkeypatch.chdir(tmp_path)
    code, out = run(["check", "m.py"])
    assert code == 1
    assert "m.py:1" in out and "syntax-error" in out


def test_fail_on_never_and_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_files(tmp_path, {"m.py": "import os\n"})
    monkeypatch.chdir(tmp_path)
    assert run(["check", "m.py", "--fail-on", "never"])[0] == 0
    assert run(["check", "m.py", "--fail-on", "error"])[0] == 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["check"], "name the files"),
        (["check", "missing.py"], "no such file"),
        (["check", "--base", "main", "x.py"], "needs a git repository"),
        (["check", "--patch", "nope.diff"], "cannot read the patch"),
    ],
)
def test_usage_errors_exit_two_with_a_message(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    assert run(argv)[0] == 2
    assert message in capsys.readouterr().err


def test_bad_config_exits_two(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write_files(tmp_path, {"pyproject.toml": "[tool.coderefine]\nbogus = 1\n", "m.py": "x = 1\n"})
    monkeypatch.chdir(tmp_path)
    assert run(["check", "m.py"])[0] == 2
    assert "unknown setting 'bogus'" in capsys.readouterr().err


def test_undo_with_nothing_to_undo(
    make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_repo(SMALL_PROJECT)
    monkeypatch.chdir(root)
    assert run(["undo"])[0] == 2
    assert "nothing to undo" in capsys.readouterr().err


def test_internal_errors_exit_three(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from coderefine.cli.commands import local

    def boom(*args: object) -> int:
        raise RuntimeError("bug")

    monkeypatch.setattr(local, "command_undo", boom)
    assert run(["undo"])[0] == 3
    assert "internal error" in capsys.readouterr().err


def _closed_port() -> str:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


@pytest.mark.parametrize("door", ["fix", "draft", "hook", "review"])
@pytest.mark.parametrize("cause", ["overloaded", "unreachable"])
def test_an_unavailable_provider_exits_four_from_every_door(
    make_repo: RepoFactory,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    door: str,
    cause: str,
) -> None:
    from tests.fake_api import FakeAnthropic, api_error, loopback_server

    root = make_repo(SMALL_PROJECT)
    git(root, "checkout", "-q", "-b", "feature")
    write_files(root, {"pkg/mod.py": str(SMALL_PROJECT["pkg/mod.py"]).replace("a + b", "a - b")})
    git(root, "commit", "-qam", "change add")
    write_files(root, {"pkg/mod.py": str(SMALL_PROJECT["pkg/mod.py"]).replace("a + b", "b - a")})
    git(root, "add", "-A")
    monkeypatch.chdir(root)
    monkeypatch.setenv("CODEREFINE_MODEL_RETRIES", "0")
    argv = {
        "fix": ["fix", "pkg/mod.py", "--no-tests"],
        "draft": ["draft", "pkg/new.py", "--intent", "a function that doubles", "--no-tests"],
        "hook": ["hook", "--no-tests"],
        "review": ["review", "--base", "main", "--no-tests"],
    }[door]
    overloaded = api_error(529, "overloaded_error", {"retry-after-ms": "1"})
    with loopback_server(FakeAnthropic([overloaded] * 4)) as url:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url if cause == "overloaded" else _closed_port())
        code, _ = run(argv)
    err = capsys.readouterr().err
    assert code == 4, err
    assert "internal error" not in err
    assert ("overloaded" if cause == "overloaded" else "cannot reach the model API") in err


def test_a_folder_works_with_staged_and_base_too(
    make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(SMALL_PROJECT)
    git(root, "checkout", "-q", "-b", "feature")
    write_files(root, {"pkg/mod.py": str(SMALL_PROJECT["pkg/mod.py"]) + "\n\nX = 1\n"})
    git(root, "commit", "-qam", "add X")
    write_files(root, {"pkg/mod.py": str(SMALL_PROJECT["pkg/mod.py"]) + "\n\nX = 2\n"})
    git(root, "add", "-A")
    monkeypatch.chdir(root)
    for argv in (["--staged", "pkg"], ["--base", "main", "pkg"]):
        _, out = run(["check", *argv, "--no-tests", "--format", "json"])
        assert [f["path"] for f in json.loads(out)["change"]["files"]] == ["pkg/mod.py"], argv


@pytest.mark.parametrize("door", ["fix", "review"])
def test_batch_from_the_command_line(
    make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], door: str
) -> None:
    root = make_repo(SMALL_PROJECT)
    git(root, "checkout", "-q", "-b", "feature")
    write_files(root, {"pkg/mod.py": str(SMALL_PROJECT["pkg/mod.py"]).replace("a + b", "a - b")})
    git(root, "commit", "-qam", "change add")
    monkeypatch.chdir(root)
    monkeypatch.setenv("CODEREFINE_MODEL_RETRIES", "0")
    argv = ["fix", "pkg/mod.py"] if door == "fix" else ["review", "--base", "main"]
    # A provider without a batch API is a usage error, before anything is paid for.
    assert run([*argv, "--no-tests", "--batch", "--model", "ollama:m"])[0] == 2
    assert "no batch API" in capsys.readouterr().err
    # Anthropic's batch API out of reach: the provider is unavailable (4), as without --batch.
    monkeypatch.setenv("ANTHROPIC_BASE_URL", _closed_port())
    code, _ = run([*argv, "--no-tests", "--batch"])
    assert code == 4, capsys.readouterr().err
    assert not (root / ".git" / "coderefine" / "batches.json").exists()  # nothing was submitted
