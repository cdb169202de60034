"""``coderefine fix`` and ``draft`` end to end: the real anthropic SDK, real ruff, pytest and git."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from coderefine.cli.main import main
from coderefine.config import Settings
from coderefine.doors.fix import run_refine, write_result
from coderefine.models.anthropic import AnthropicModel
from coderefine.project.change import from_worktree
from coderefine.project.gitio import GitRepo
from coderefine.project.runner import SubprocessRunner
from coderefine.project.workspace import project_files
from coderefine.project.writes import Journal
from tests.conftest import SMALL_PROJECT, RepoFactory, git, write_files
from tests.fake_api import FakeAnthropic, api_error, loopback_server, text_message, tool_message, usage
from tests.refiner.test_loop import BUGGY, FIX, PASS, revise


def fix_script() -> list[object]:
    return [
        tool_message(revise(), usage(1200, 90, write=800)),
        text_message(FIX, usage(300, 60, read=800)),
        tool_message(PASS, usage(1200, 20, write=800)),
    ]


def test_the_loop_through_the_sdk_with_faults(make_repo: RepoFactory) -> None:
    root = make_repo(SMALL_PROJECT)
    write_files(root, {"pkg/mod.py": BUGGY})
    repo = GitRepo.find(root)
    change = from_worktree([Path("pkg/mod.py")], cwd=root, repo=repo, max_bytes=1 << 20)
    fake = FakeAnthropic(
        [
            api_error(429, "rate_limit_error", {"retry-after-ms": "1"}),
            tool_message({"verdict": "revise", "summary": 3, "issues": "not a list"}),  # malformed
            tool_message(revise(), usage(1200, 90, write=800)),
            api_error(529, "overloaded_error", {"retry-after-ms": "1"}),
            text_message(FIX, usage(300, 60, read=800)),
            tool_message(PASS, usage(1200, 20, write=800)),
        ]
    )
    model = AnthropicModel("claude-sonnet-5-5", environ={"ANTHROPIC_API_KEY": "k"}, http_client=fake.client())
    result = run_refine(
        change, Settings(), model, SubprocessRunner(), {"PATH": "/usr/bin:/bin"}, project_files(root, repo)
    )
    assert result.stop == "passed"
    assert "return a + b" in result.final["pkg/mod.py"]
    critic, retry, reviser = fake.requests[0], fake.requests[2], fake.requests[4]
    assert "'issues' must be a list" in retry["messages"][-1]["content"][0]["text"]
    # Critic and reviser share the cached prefix: same tools, same system blocks, cache mark on the code.
    assert critic["system"] == reviser["system"] and critic["tools"] == reviser["tools"]
    assert reviser["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert result.usage["reviser"].cache_read_tokens == 800
    assert result.cost > 0

    journal = Journal.for_project(root, repo.git_dir if repo else None)
    written, _ = write_result(result, journal)
    assert written == ("pkg/mod.py",)
    assert "return a + b" in (root / "pkg/mod.py").read_text()
    journal.undo()
    assert (root / "pkg/mod.py").read_text() == BUGGY


def test_write_refuses_when_the_file_changed_during_the_run(make_repo: RepoFactory) -> None:
    root = make_repo(SMALL_PROJECT)
    write_files(root, {"pkg/mod.py": BUGGY})
    repo = GitRepo.find(root)
    change = from_worktree([Path("pkg/mod.py")], cwd=root, repo=repo, max_bytes=1 << 20)
    from coderefine.models.scripted import ScriptedModel

    result = run_refine(
        change,
        Settings(tests=False),
        ScriptedModel([revise(), FIX, PASS]),
        SubprocessRunner(),
        {},
        project_files(root, repo),
    )
    write_files(root, {"pkg/mod.py": BUGGY + "# the user typed this meanwhile\n"})
    from coderefine.errors import WriteError

    with pytest.raises(WriteError, match="changed while coderefine was running"):
        write_result(result, Journal.for_project(root, None))
    assert (root / "pkg/mod.py").read_text().endswith("meanwhile\n")


def cli(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    return main(argv, out=out, stdin=io.StringIO()), out.getvalue()


@pytest.fixture
def buggy_repo(make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = make_repo(SMALL_PROJECT)
    write_files(root, {"pkg/mod.py": BUGGY})
    monkeypatch.chdir(root)
    return root


def test_cli_fix_over_a_loopback_server_writes_the_fix(
    buggy_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeAnthropic(fix_script())  # type: ignore[arg-type]
    with loopback_server(fake) as url:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
        code, out = cli(["fix", "pkg/mod.py", "-m", "add must add"])
    assert code == 0, out
    assert "return a + b" in (buggy_repo / "pkg/mod.py").read_text()
    assert "wrote pkg/mod.py" in out and "+    return a + b" in out
    assert "add must add" in fake.requests[0]["messages"][0]["content"][0]["text"]
    assert cli(["undo"])[0] == 0
    assert (buggy_repo / "pkg/mod.py").read_text() == BUGGY


def test_cli_dry_run_writes_nothing_and_json_reports(
    buggy_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeAnthropic(fix_script())  # type: ignore[arg-type]
    with loopback_server(fake) as url:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        code, out = cli(["fix", "pkg/mod.py", "--dry-run", "--format", "json"])
    data = json.loads(out)
    assert code == 0
    assert data["changed"] == ["pkg/mod.py"] and data["written"] == []
    assert data["stop"] == "passed"
    assert data["usage"]["reviser"]["cache_read_tokens"] == 800
    # The failing test backs the critic's one issue and is resolved: no confirming critique by default.
    assert [r["outcome"] for r in data["rounds"]] == ["accepted"]
    assert (buggy_repo / "pkg/mod.py").read_text() == BUGGY


def test_record_then_replay_reproduces_the_run(
    buggy_repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    record = tmp_path / "run.jsonl"
    fake = FakeAnthropic(fix_script())  # type: ignore[arg-type]
    with loopback_server(fake) as url:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        first = cli(["fix", "pkg/mod.py", "--dry-run", "--format", "json", "--record", str(record)])
    monkeypatch.delenv("ANTHROPIC_BASE_URL")
    second = cli(["fix", "pkg/mod.py", "--dry-run", "--format", "json", "--model", f"replay:{record}"])
    one, two = json.loads(first[1]), json.loads(second[1])
    assert one["diff"] == two["diff"] and one["rounds"] == two["rounds"]
    assert len(record.read_text().splitlines()) == 2  # critic and reviser; the signals confirmed it


def test_exit_non_zero_on_fix(buggy_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeAnthropic(fix_script())  # type: ignore[arg-type]
    with loopback_server(fake) as url:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        code, _ = cli(["fix", "pkg/mod.py", "--exit-non-zero-on-fix", "--no-tests"])
    assert code == 1
    assert "return a + b" in (buggy_repo / "pkg/mod.py").read_text()


def test_findings_that_remain_exit_one(buggy_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeAnthropic([tool_message(revise()), text_message("I would rather not change anything.")])
    with loopback_server(fake) as url:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        code, out = cli(["fix", "pkg/mod.py"])
    assert code == 1
    assert "no change to write" in out
    assert (buggy_repo / "pkg/mod.py").read_text() == BUGGY


def test_no_api_key_exits_two_and_says_how(buggy_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = cli(["fix", "pkg/mod.py"])
    err = capsys.readouterr().err
    assert code == 2
    assert "ANTHROPIC_API_KEY" in err and "ANTHROPIC_BASE_URL" in err and "coderefine check" in err


def test_cli_draft_creates_a_new_file(make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_repo(SMALL_PROJECT)
    monkeypatch.chdir(root)
    author = "pkg/new.py\n```python\n<<<<<<< SEARCH\n=======\ndef double(x):\n    return 2 * x\n>>>>>>> REPLACE\n```\n"
    fake = FakeAnthropic([text_message(author), tool_message(PASS)])
    with loopback_server(fake) as url:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        code, out = cli(["draft", "pkg/new.py", "--intent", "a function that doubles"])
    assert code == 0, out
    assert (root / "pkg/new.py").read_text() == "def double(x):\n    return 2 * x\n"
    assert "ROLE: AUTHOR" in fake.requests[0]["messages"][0]["content"][0]["text"]
    assert cli(["undo"])[0] == 0
    assert not (root / "pkg/new.py").exists()
    assert git(root, "status", "--porcelain") == ""


def test_draft_needs_an_intent(
    make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(make_repo(SMALL_PROJECT))
    assert cli(["draft", "pkg/new.py"])[0] == 2
    assert "--intent" in capsys.readouterr().err


def test_a_candidate_that_is_not_better_is_not_written(
    buggy_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The reviser swaps one bug for another: the test still fails, the signals are the same.
    other_bug = "pkg/mod.py\n```python\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a * b\n>>>>>>> REPLACE\n```\n"
    fake = FakeAnthropic(
        [
            tool_message(revise()),
            text_message(other_bug),
            tool_message(revise("return a * b")),
            text_message("I have nothing better."),
        ]
    )
    with loopback_server(fake) as url:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        code, out = cli(["fix", "pkg/mod.py"])
        assert (buggy_repo / "pkg/mod.py").read_text() == BUGGY
        assert code == 1, out
        assert "revision accepted" in out and "signals 1 error → 1 error" in out
        assert "the best candidate (not written):\n--- a/pkg/mod.py" in out
        assert "+    return a * b" in out
        assert "nothing was written: the best candidate fixes no signal and the critic did not pass it" in out
        assert "wrote" not in out
        fake.replies = [tool_message(revise()), text_message(other_bug), tool_message(revise("return a * b"))]
        fake.replies.append(text_message("I have nothing better."))
        code, out = cli(["fix", "pkg/mod.py", "--format", "json"])
    data = json.loads(out)
    assert data["written"] == [] and "fixes no signal" in data["not_written"]


def test_dry_run_says_nothing_was_written(buggy_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeAnthropic(fix_script())  # type: ignore[arg-type]
    with loopback_server(fake) as url:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        code, out = cli(["fix", "pkg/mod.py", "--dry-run", "--no-tests"])
    assert code == 0, out
    assert out.rstrip().endswith("nothing was written: a dry run (--dry-run, --diff)")
    assert (buggy_repo / "pkg/mod.py").read_text() == BUGGY


def test_a_symlink_leading_outside_the_project_is_refused_before_any_model_call(
    make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_repo(SMALL_PROJECT)
    (root.parent / "outside.py").write_text(BUGGY)
    (root / "pkg/link.py").symlink_to(root.parent / "outside.py")
    monkeypatch.chdir(root)
    fake = FakeAnthropic(fix_script())  # type: ignore[arg-type]
    with loopback_server(fake) as url:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        code, _ = cli(["fix", "pkg/link.py", "--no-tests"])
    assert code == 2
    assert "a symlink that leads outside the project" in capsys.readouterr().err
    assert fake.requests == []
    assert (root.parent / "outside.py").read_text() == BUGGY
