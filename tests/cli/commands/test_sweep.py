"""``coderefine fix FOLDER``: the sweep through the command line, the real SDK over a loopback server."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from coderefine.cli.main import main
from tests.conftest import RepoFactory
from tests.doors.sweep.test_run import BUGGY, CLEAN, FIXED, PASS, critique_of, edit
from tests.fake_api import FakeAnthropic, loopback_server, text_message, tool_message


def cli(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    return main(argv, out=out, stdin=io.StringIO()), out.getvalue()


@pytest.fixture
def project(make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = make_repo({"pkg/__init__.py": "", "pkg/a.py": BUGGY, "pkg/d.py": CLEAN, "other.py": BUGGY})
    monkeypatch.chdir(root)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    return root


def test_a_folder_sweep_from_the_command_line(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeAnthropic(
        [
            tool_message(critique_of("pkg/a.py")),
            text_message(edit("    return a - b\n", "    return a + b\n", "pkg/a.py")),
            tool_message(PASS),
            tool_message(PASS),  # pkg/d.py
        ]
    )
    argv = ["fix", "pkg", "-m", "add must add", "--exclude", "__init__.py", "--jobs", "1", "--no-tests"]
    with loopback_server(fake) as url:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        code, out = cli([*argv, "--format", "json"])
        assert code == 0, out
        data = json.loads(out)
        assert [(f["path"], f["status"]) for f in data["files"]] == [
            ("pkg/a.py", "fixed"),
            ("pkg/d.py", "unchanged"),
        ]
        assert data["written"] == ["pkg/a.py"] and data["cost"] > 0 and data["exit_code"] == 0
        assert (project / "pkg/a.py").read_text() == FIXED and (project / "other.py").read_text() == BUGGY
        # The same command again: every file is done, so no request is made.
        code, out = cli(argv)
    assert code == 0 and len(fake.requests) == 4
    assert "pkg/a.py: fixed cached" in out and "2 from earlier runs" in out
    assert cli(["undo"])[0] == 0 and (project / "pkg/a.py").read_text() == BUGGY


def test_sweep_options_need_a_sweep_and_a_sweep_needs_files_as_they_are(project: Path) -> None:
    code, _ = cli(["fix", "pkg/a.py", "pkg/d.py", "--jobs", "2"])
    assert code == 2
    code, _ = cli(["fix", "pkg", "--staged"])
    assert code == 2
    code, _ = cli(["fix", "pkg", "--budget", "0"])
    assert code == 2


def test_the_help_says_when_files_are_one_change_and_when_a_sweep(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["fix", "--help"])
    text = capsys.readouterr().out
    assert "FILEs named one by one are one change" in text and "--budget DOLLARS" in text


def test_shards_of_a_sweep_split_its_files(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from coderefine.doors.review.shard import shard_files

    names = ["other.py", "pkg/a.py", "pkg/d.py"]
    expected = [shard_files([(n, (project / n).stat().st_size) for n in names], k, 2) for k in (1, 2)]
    fake = FakeAnthropic([tool_message(PASS)] * 3)
    seen: list[list[str]] = []
    with loopback_server(fake) as url:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        for k in (1, 2):
            argv = [
                "fix",
                ".",
                "--exclude",
                "__init__.py",
                "--shard",
                f"{k}/2",
                "--no-tests",
                "--format",
                "json",
            ]
            code, out = cli(argv)
            assert code == 0, out
            seen.append([f["path"] for f in json.loads(out)["files"]])
    assert seen == expected and sorted(seen[0] + seen[1]) == names
    assert cli(["fix", ".", "--shard", "3/2"])[0] == 2
    assert cli(["fix", "pkg/a.py", "--sweep", "--shard", "2/2"]) == (
        0,
        "coderefine fix: shard 2/2 has no files (fewer files than shards); nothing to do\n",
    )
    assert cli(["fix", "pkg/a.py", "--shard", "1/2"])[0] == 2  # a shard needs a sweep


def test_a_sweep_in_batch_mode_refuses_a_provider_without_a_batch_api(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = cli(["fix", "pkg", "--batch", "--no-tests", "--model", "ollama:m"])
    assert code == 2 and "no batch API" in capsys.readouterr().err
