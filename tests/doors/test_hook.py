"""The hook on real git repositories: staged content only, the cache, concurrency, time limit, writes."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from coderefine.cli.commands.hooks import commit_message_intent
from coderefine.cli.main import main
from coderefine.config import Settings
from coderefine.doors.githook import hook_script
from coderefine.doors.hook import Hook, HookResult
from coderefine.models.base import ModelRequest
from coderefine.models.scripted import ScriptedModel
from coderefine.project.cache import ReviewCache
from coderefine.project.gitio import GitRepo
from coderefine.project.runner import Completed, SubprocessRunner
from tests.conftest import SMALL_PROJECT, RepoFactory, git, write_files
from tests.paths import REPO_ROOT
from tests.refiner.test_loop import BUGGY, FIX, PASS, revise


class CountingRunner(SubprocessRunner):
    """The real runner, counting the pytest runs."""

    def __init__(self) -> None:
        super().__init__()
        self.pytest_runs = 0

    def run(self, argv: Sequence[str], **kwargs: object) -> Completed:  # type: ignore[override]
        if "pytest" in " ".join(argv):
            self.pytest_runs += 1
        return super().run(argv, **kwargs)  # type: ignore[arg-type]


def staged_bug(make_repo: RepoFactory) -> Path:
    root = make_repo(SMALL_PROJECT)
    write_files(root, {"pkg/mod.py": BUGGY})
    git(root, "add", "pkg/mod.py")
    return root


def run_hook(
    root: Path,
    mode: str,
    model: ScriptedModel | None = None,
    runner: SubprocessRunner | None = None,
    settings: Settings | None = None,
    timeout: float = 600,
    clock: object = None,
) -> HookResult:
    repo = GitRepo.find(root)
    assert repo is not None
    settings = settings or Settings()
    kwargs: dict[str, object] = {"clock": clock} if clock else {}

    def no_model() -> ScriptedModel:
        raise AssertionError("no model expected")

    hook = Hook(
        repo,
        settings,
        mode=mode,  # type: ignore[arg-type]
        intent="add two numbers",
        model_factory=(lambda: model) if model is not None else no_model,  # type: ignore[arg-type,return-value]
        runner=runner or SubprocessRunner(),
        environ={"PATH": os.environ["PATH"]},
        cache=ReviewCache.for_project(root, repo.git_dir, 100),
        **kwargs,  # type: ignore[arg-type]
    )
    return hook.run([], cwd=root, timeout=timeout)


def test_signals_mode_then_a_cache_hit_runs_nothing(make_repo: RepoFactory) -> None:
    root = staged_bug(make_repo)
    runner = CountingRunner()
    cold = Settings(warm_tests=False)  # every test run then goes through the counting runner
    first = run_hook(root, "signals", runner=runner, settings=cold)
    assert first.exit_code == 1
    assert "tests/test_mod.py::test_add" in first.render()
    runs = runner.pytest_runs
    assert runs >= 1
    second = run_hook(root, "signals", runner=runner, settings=cold)
    assert second.verdicts[0].cached and second.exit_code == 1
    assert runner.pytest_runs == runs


def test_check_mode_reports_and_caches(make_repo: RepoFactory) -> None:
    root = staged_bug(make_repo)
    model = ScriptedModel([revise()])
    result = run_hook(root, "check", model, settings=Settings(tests=False))
    assert result.exit_code == 1
    assert "add subtracts" in result.render()
    assert (root / "pkg/mod.py").read_text() == BUGGY
    again = run_hook(root, "check", ScriptedModel([]), settings=Settings(tests=False))
    assert again.verdicts[0].cached and again.exit_code == 1


def test_check_mode_passes_a_clean_change(make_repo: RepoFactory) -> None:
    root = make_repo(SMALL_PROJECT)
    write_files(
        root, {"pkg/mod.py": str(SMALL_PROJECT["pkg/mod.py"]) + "\n\ndef sub(a, b):\n    return a - b\n"}
    )
    git(root, "add", "-A")
    result = run_hook(root, "check", ScriptedModel([PASS]))
    assert result.exit_code == 0
    assert result.verdicts[0].status == "clean"


def test_fix_mode_writes_then_the_restaged_fix_is_a_cache_hit(make_repo: RepoFactory) -> None:
    root = make_repo({**SMALL_PROJECT, "pkg/mod.py": BUGGY.replace("a - b", "a * 1")})
    write_files(root, {"pkg/mod.py": BUGGY})
    git(root, "add", "pkg/mod.py")
    result = run_hook(root, "fix", ScriptedModel([revise(), FIX, PASS]), settings=Settings(tests=False))
    assert result.exit_code == 1
    assert result.written == ("pkg/mod.py",)
    assert "return a + b" in (root / "pkg/mod.py").read_text()
    assert git(root, "diff", "--cached", "--stat") != ""  # the index is left for the user to re-stage
    git(root, "add", "pkg/mod.py")
    again = run_hook(root, "fix", ScriptedModel([]), settings=Settings(tests=False))
    assert again.exit_code == 0 and again.verdicts[0].cached


def test_fix_mode_shows_what_the_critic_found_and_what_it_cost(make_repo: RepoFactory) -> None:
    root = make_repo(SMALL_PROJECT)
    write_files(root, {"pkg/mod.py": BUGGY})
    git(root, "add", "pkg/mod.py")
    result = run_hook(root, "fix", ScriptedModel([revise(), FIX, PASS]), settings=Settings(tests=False))
    text = result.render()
    assert "  fixed: pkg/mod.py:2: [error] add subtracts" in text, text
    assert "  tokens: critic scripted" in text and "reviser scripted" in text, text
    assert text.rstrip().endswith("0 from the cache, cost $0.0000"), text


def test_fix_mode_never_touches_unstaged_work(make_repo: RepoFactory) -> None:
    root = staged_bug(make_repo)
    unstaged = BUGGY + "\n\n# work in progress, not staged\n"
    write_files(root, {"pkg/mod.py": unstaged})
    result = run_hook(root, "fix", ScriptedModel([revise(), FIX, PASS]), settings=Settings(tests=False))
    assert result.verdicts[0].status == "not-written"
    assert result.exit_code == 1
    assert (root / "pkg/mod.py").read_text() == unstaged
    assert git(root, "show", ":pkg/mod.py") == BUGGY


def test_files_are_reviewed_concurrently(make_repo: RepoFactory) -> None:
    root = make_repo(SMALL_PROJECT)
    write_files(root, {f"pkg/m{n}.py": f"X{n} = {n}\n" for n in range(3)})
    git(root, "add", "-A")
    barrier = threading.Barrier(3, timeout=20)

    def critic(request: ModelRequest) -> Mapping[str, object]:
        barrier.wait()  # only passes when three critiques are in flight at once
        return PASS

    model = ScriptedModel([critic, critic, critic])
    result = run_hook(root, "check", model, settings=Settings(tests=False, jobs=3))
    assert [v.status for v in result.verdicts] == ["clean"] * 3


def test_the_time_limit_skips_what_is_left_and_writes_nothing(make_repo: RepoFactory) -> None:
    root = staged_bug(make_repo)
    ticks = iter([0.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0])
    result = run_hook(
        root,
        "fix",
        ScriptedModel([revise(), FIX, PASS]),
        settings=Settings(tests=False),
        timeout=5,
        clock=lambda: next(ticks, 2000.0),
    )
    assert result.verdicts[0].status == "skipped"
    assert "time limit reached: skipped pkg/mod.py" in result.render()
    assert (root / "pkg/mod.py").read_text() == BUGGY


def cli(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    return main(argv, out=out, stdin=io.StringIO()), out.getvalue()


def test_cli_without_a_key_names_skip_and_the_setting(
    make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(staged_bug(make_repo))
    assert cli(["hook"])[0] == 2
    err = capsys.readouterr().err
    assert "SKIP=coderefine" in err and 'hook-mode = "signals"' in err


def test_cli_hook_mode_from_the_environment(make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(staged_bug(make_repo))
    monkeypatch.setenv("CODEREFINE_HOOK_MODE", "signals")
    code, out = cli(["hook", "pkg/mod.py"])
    assert code == 1 and "test_add" in out


def test_commit_message_is_the_intent(
    make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    root = staged_bug(make_repo)
    monkeypatch.chdir(root)
    message = tmp_path / "COMMIT_EDITMSG"
    message.write_text("Make add subtract on purpose\n\n# Please enter the commit message\n")
    record = tmp_path / "replay.jsonl"
    import json

    record.write_text(json.dumps({"role": "critic", "reply": {"tool_input": PASS}}) + "\n")
    monkeypatch.setenv("CODEREFINE_TESTS", "false")
    code, out = cli(["hook", "--check", "--commit-msg", str(message), "--model", f"replay:{record}"])
    assert code == 0, out
    assert commit_message_intent(message.read_text()) == "Make add subtract on purpose"


def test_commit_message_parsing() -> None:
    text = "Subject\n\nBody line\n# comment\n# ------------------------ >8 ------------------------\ndiff --git\n"
    assert commit_message_intent(text) == "Subject\n\nBody line"


def test_the_plain_hook_file_is_the_installed_script() -> None:
    assert (REPO_ROOT / "hooks" / "pre-commit").read_text() == hook_script("")


def test_install_hook_refuses_a_foreign_hook(
    make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_repo(SMALL_PROJECT)
    monkeypatch.chdir(root)
    foreign = root / ".git" / "hooks" / "pre-commit"
    foreign.parent.mkdir(parents=True, exist_ok=True)
    foreign.write_text("#!/bin/sh\necho mine\n")
    assert cli(["install-hook"])[0] == 2
    assert "--force" in capsys.readouterr().err
    assert foreign.read_text() == "#!/bin/sh\necho mine\n"
    assert cli(["install-hook", "--force"])[0] == 0
    assert cli(["install-hook"])[0] == 0  # replacing our own hook needs no --force


def test_plain_git_hook_with_a_real_commit(make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_repo(SMALL_PROJECT)
    monkeypatch.chdir(root)
    assert cli(["install-hook"])[0] == 0
    env = {**os.environ, "CODEREFINE_HOOK_MODE": "signals"}
    write_files(root, {"pkg/mod.py": BUGGY, "notes.txt": "unstaged work"})
    git(root, "add", "pkg/mod.py")
    failed = subprocess.run(
        ["git", "commit", "-m", "break add"], cwd=root, env=env, capture_output=True, text=True
    )
    assert failed.returncode != 0
    assert "test_add" in failed.stdout + failed.stderr
    assert (root / "notes.txt").read_text() == "unstaged work"
    write_files(
        root, {"pkg/mod.py": str(SMALL_PROJECT["pkg/mod.py"]) + "\n\ndef sub(a, b):\n    return a - b\n"}
    )
    git(root, "add", "pkg/mod.py")
    done = subprocess.run(
        ["git", "commit", "-m", "add sub"], cwd=root, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    skipped = subprocess.run(
        ["git", "commit", "--allow-empty", "-m", "skip"],
        cwd=root,
        env={**env, "SKIP": "coderefine"},
        capture_output=True,
        text=True,
    )
    assert skipped.returncode == 0
    assert sys.executable in (root / ".git" / "hooks" / "pre-commit").read_text()


def test_the_hook_keys_the_cache_with_the_protocol_version() -> None:
    from coderefine.doors import hook
    from coderefine.refiner import prompting

    assert hook.PROTOCOL_VERSION == prompting.PROTOCOL_VERSION


def test_fix_mode_writes_nothing_that_is_not_better(make_repo: RepoFactory) -> None:
    root = staged_bug(make_repo)
    other_bug = FIX.replace("a + b", "a * b")
    model = ScriptedModel([revise(), other_bug, revise("return a * b"), "Nothing better."])
    result = run_hook(root, "fix", model)
    assert result.written == ()
    assert (root / "pkg/mod.py").read_text() == BUGGY
    [verdict] = result.verdicts
    assert verdict.status == "findings" and result.exit_code == 1
    text = result.render()
    assert "not written: the best candidate fixes no signal" in text
    assert "+    return a * b" in text
    assert "tests/test_mod.py::test_add" in text  # the failure that stays in the file


def test_an_overloaded_provider_through_the_sdk_is_exit_code_four(make_repo: RepoFactory) -> None:
    from coderefine.errors import EXIT_PROVIDER, CoderefineError
    from coderefine.models.anthropic import AnthropicModel
    from tests.fake_api import FakeAnthropic, api_error

    root = staged_bug(make_repo)
    fake = FakeAnthropic([api_error(529, "overloaded_error", {"retry-after-ms": "1"})] * 3)
    model = AnthropicModel(
        "claude-sonnet-5-5", environ={"ANTHROPIC_API_KEY": "sk-ant-test"}, http_client=fake.client()
    )
    with pytest.raises(CoderefineError) as info:
        run_hook(root, "check", model, settings=Settings(tests=False))  # type: ignore[arg-type]
    assert info.value.exit_code == EXIT_PROVIDER
    assert len(fake.requests) == 3


def test_the_hook_says_what_was_already_there_and_which_tests_ran(make_repo: RepoFactory) -> None:
    root = make_repo({**SMALL_PROJECT, "pkg/mod.py": "import sys\n" + str(SMALL_PROJECT["pkg/mod.py"])})
    write_files(root, {"pkg/mod.py": "import sys\n" + BUGGY})
    git(root, "add", "pkg/mod.py")
    text = run_hook(root, "signals").render()
    assert "tests/test_mod.py::test_add" in text
    assert "  already there before the change (not counted): 2" in text  # F401 and a format run
    assert "  pytest: 2 tests ran from tests/test_mod.py, 1 failed" in text  # "ok" only when all passed


def test_a_bug_that_fails_many_tests_is_folded_in_the_hook_output(make_repo: RepoFactory) -> None:
    """Sixty plain tests fail at the same assert of a helper: the verdict lists a few and counts the rest."""
    helper = "from pkg.mod import add\n\n\ndef check(n):\n    assert add(n, 1) == n + 1\n\n"
    tests = helper + "".join(f"\ndef test_add_{n}():\n    check({n})\n\n" for n in range(60))
    root = make_repo({**SMALL_PROJECT, "tests/test_mod.py": tests})
    write_files(root, {"pkg/mod.py": BUGGY})
    git(root, "add", "pkg/mod.py")
    text = run_hook(root, "signals").render()
    listed = [row for row in text.splitlines() if "tests/test_mod.py::test_add_" in row]
    assert 2 <= len(listed) <= 10, text
    assert f"... and {60 - len(listed)} more that failed the same way at tests/test_mod.py:5" in text, text
    assert f"{60 - len(listed)} signals in all are only counted above, not listed" in text
    assert "coderefine check --format json" in text
    assert "  pytest: 60 tests ran from tests/test_mod.py, 60 failed" in text


def test_the_failing_tests_source_shown_is_the_staged_one_not_unstaged_work(make_repo: RepoFactory) -> None:
    # The tests run in a tree exported from the index; the spec the critic reads comes from there too.
    root = make_repo(SMALL_PROJECT)
    staged_test = "from pkg.mod import add\n\n\ndef test_add():\n    assert add(1, 2) == 3  # staged\n"
    write_files(root, {"tests/test_mod.py": staged_test})
    git(root, "commit", "-qam", "a test")
    write_files(root, {"pkg/mod.py": BUGGY})
    git(root, "add", "pkg/mod.py")
    write_files(root, {"tests/test_mod.py": staged_test.replace("# staged", "# unstaged work")})
    model = ScriptedModel([revise()])
    result = run_hook(root, "check", model)
    assert result.exit_code == 1
    critic = model.history[0].prompt_text()
    assert "def test_add():" in critic and "# staged" in critic
    assert "unstaged work" not in critic
