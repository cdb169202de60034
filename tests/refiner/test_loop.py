"""The loop end to end: the real Evaluator (ruff, pytest, git in a temporary repository), scripted models."""

from __future__ import annotations

from pathlib import Path

from coderefine.config import Settings
from coderefine.models.base import Model
from coderefine.models.scripted import Script, ScriptedModel
from coderefine.project.change import Change, from_worktree
from coderefine.project.gitio import GitRepo
from coderefine.project.runner import SubprocessRunner
from coderefine.project.workspace import project_files
from coderefine.refiner.loop import refine
from coderefine.refiner.records import RefineResult
from coderefine.refiner.signal_section import CONTEXT_NOTE
from coderefine.refiner.spec import HEADING as SPEC_HEADING
from coderefine.signals.evaluate import Evaluator
from tests.conftest import SMALL_PROJECT, RepoFactory, write_files

BUGGY = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"


def edit(search: str, replace: str, path: str = "pkg/mod.py") -> str:
    return f"Here is the change.\n\n{path}\n```python\n<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n```\n"


def revise(evidence: str = "return a - b", severity: str = "error") -> dict[str, object]:
    return {
        "verdict": "revise",
        "summary": "add subtracts",
        "issues": [
            {
                "title": "add subtracts",
                "severity": severity,
                "path": "pkg/mod.py",
                "line": 2,
                "end_line": 2,
                "evidence": evidence,
                "suggestion": "use +",
            }
        ],
    }


PASS = {"verdict": "pass", "summary": "correct now", "issues": []}
FIX = edit("    return a - b\n", "    return a + b\n")


def buggy_change(make_repo: RepoFactory, text: str = BUGGY) -> tuple[Change, list[str]]:
    root = make_repo(SMALL_PROJECT)
    write_files(root, {"pkg/mod.py": text})
    repo = GitRepo.find(root)
    change = from_worktree([Path("pkg/mod.py")], cwd=root, repo=repo, max_bytes=1 << 20)
    return change, project_files(root, repo)


def run(
    change: Change, files: list[str], model: Model, settings: Settings | None = None, **kwargs: object
) -> RefineResult:
    settings = settings or Settings()
    with Evaluator(change, settings, SubprocessRunner(), {"PATH": "/usr/bin:/bin"}, files) as evaluator:
        return refine(change, settings, model, evaluator, intent="add two numbers", **kwargs)  # type: ignore[arg-type]


def scripted(*replies: Script) -> ScriptedModel:
    return ScriptedModel(replies)


CLASSIC = Settings(confirm="always", merge="never")


def test_a_fix_is_accepted_and_then_passed(make_repo: RepoFactory) -> None:
    change, files = buggy_change(make_repo)
    model = scripted(revise(), FIX, PASS)
    result = run(change, files, model, CLASSIC)
    assert [r.outcome for r in result.rounds] == ["accepted", "passed"]
    assert result.stop == "passed"
    assert "return a + b" in result.final["pkg/mod.py"]
    assert result.initial.comparison.introduced[0].code == "tests/test_mod.py::test_add"
    assert result.evaluation.comparison.clean
    assert result.rounds[0].changed == ("pkg/mod.py::add",)
    assert [r.role for r in model.history] == ["critic", "reviser", "critic"]
    # The user's file is untouched: refine never writes.
    assert (change.root / "pkg/mod.py").read_text() == BUGGY
    assert set(result.usage) == {"critic", "reviser"}


def test_by_default_a_resolved_signal_backed_issue_needs_no_confirming_critique(
    make_repo: RepoFactory,
) -> None:
    change, files = buggy_change(make_repo)
    model = scripted(revise(), FIX)  # the critic attached no edits: the reviser writes the fix
    result = run(change, files, model)
    assert [r.outcome for r in result.rounds] == ["accepted"]
    assert result.stop == "passed" and result.evaluation.comparison.clean
    assert [r.role for r in model.history] == ["critic", "reviser"]
    assert "edits" in str(model.history[0].tool.input_schema if model.history[0].tool else "")


def test_a_candidate_that_makes_signals_worse_is_discarded(make_repo: RepoFactory) -> None:
    change, files = buggy_change(make_repo)
    worse = edit("    return a * b\n", "    return a ** b\n")  # breaks test_mul as well
    result = run(change, files, scripted(revise(), worse))
    assert [r.outcome for r in result.rounds] == ["rejected"]
    assert result.final == result.original
    assert result.stop == "no-progress"


def test_with_retry_worse_the_reviser_is_told_what_got_worse_and_tries_again(make_repo: RepoFactory) -> None:
    change, files = buggy_change(make_repo)
    worse = edit("    return a * b\n", "    return a ** b\n")  # breaks test_mul as well
    model = scripted(revise(), worse, FIX, PASS)
    result = run(change, files, model, retry_worse=True)
    assert [r.outcome for r in result.rounds] == ["rejected", "accepted", "passed"]
    assert "return a + b" in result.final["pkg/mod.py"]
    assert [r.role for r in model.history] == ["critic", "reviser", "reviser", "critic"]
    told = model.history[2].prompt_text()
    assert "your last revision was discarded" in told
    assert "test_mul" in told


def test_a_search_that_misses_goes_back_once_with_the_closest_lines(make_repo: RepoFactory) -> None:
    change, files = buggy_change(make_repo)
    miss = edit("    return a - c\n", "    return a + c\n")
    model = scripted(revise(), miss, FIX, PASS)
    result = run(change, files, model, Settings(tests=False))
    assert result.stop == "passed"
    retry = model.history[2]
    assert retry.role == "reviser"
    assert "does not match" in retry.messages[-1].text
    assert "return a - b" in retry.messages[-1].text  # the closest actual line


def test_a_candidate_that_fails_the_gate_twice_fails_the_round(make_repo: RepoFactory) -> None:
    change, files = buggy_change(make_repo)
    broken = edit("    return a - b\n", "    return a +\n")
    model = scripted(revise(), broken, broken)
    result = run(change, files, model, Settings(tests=False))
    assert [r.outcome for r in result.rounds] == ["gate-failed"]
    assert "does not pass the gate" in result.rounds[0].note
    assert result.final == result.original


def test_a_model_that_never_passes_stops_at_the_round_limit(make_repo: RepoFactory) -> None:
    change, files = buggy_change(make_repo)
    replies: list[Script] = []
    for n in range(3):
        replies.append(revise("return a * b", "warning"))
        replies.append(
            edit(f"    return a * b{'  # ' + str(n - 1) if n else ''}\n", f"    return a * b  # {n}\n")
        )
    result = run(change, files, scripted(*replies), Settings(tests=False, rounds=3))
    assert [r.outcome for r in result.rounds] == ["accepted"] * 3
    assert result.stop == "rounds"


def test_a_revision_that_repeats_an_earlier_version_stops(make_repo: RepoFactory) -> None:
    change, files = buggy_change(make_repo)
    there = edit("    return a * b\n", "    return b * a\n")
    back = edit("    return b * a\n", "    return a * b\n")
    result = run(change, files, scripted(revise(), there, revise(), back), Settings(tests=False))
    assert [r.outcome for r in result.rounds] == ["accepted", "rejected"]
    assert result.stop == "repeated"


def test_the_token_budget_stops_the_run_before_a_call(make_repo: RepoFactory) -> None:
    change, files = buggy_change(make_repo)
    model = scripted(revise(), FIX, PASS)
    result = run(change, files, model, Settings(tests=False, max_tokens=500))
    assert result.stop == "budget"
    assert model.history == []
    assert "token budget" in result.rounds[0].note


def test_a_malformed_critique_is_asked_again_once(make_repo: RepoFactory) -> None:
    change, files = buggy_change(make_repo)
    model = scripted({"verdict": "perhaps"}, revise(), FIX, PASS)
    result = run(change, files, model, Settings(tests=False))
    assert result.stop == "passed"
    assert "'verdict' must be" in model.history[1].messages[-1].text


def test_a_critique_unusable_twice_ends_the_run(make_repo: RepoFactory) -> None:
    change, files = buggy_change(make_repo)
    result = run(change, files, scripted("no json here", "still none"), Settings(tests=False))
    assert result.stop == "no-progress"
    assert "critique unusable" in result.rounds[0].note


def test_pass_with_failing_signals_still_revises(make_repo: RepoFactory) -> None:
    change, files = buggy_change(make_repo)
    model = scripted(PASS, FIX, PASS)
    result = run(change, files, model)
    assert [r.outcome for r in result.rounds] == ["accepted", "passed"]


def test_draft_writes_new_code_then_refines(make_repo: RepoFactory) -> None:
    root = make_repo(SMALL_PROJECT)
    from coderefine.project.change import draft_change

    repo = GitRepo.find(root)
    change = draft_change(Path("pkg/new.py"), cwd=root, repo=repo, max_bytes=1 << 20)
    author = "pkg/new.py\n```python\n<<<<<<< SEARCH\n=======\ndef double(x):\n    return 2 * x\n>>>>>>> REPLACE\n```\n"
    model = scripted(author, PASS)
    result = run(change, project_files(root, repo), model, Settings(tests=False), draft=True)
    assert result.drafted
    assert result.final["pkg/new.py"] == "def double(x):\n    return 2 * x\n"
    assert [r.outcome for r in result.rounds] == ["accepted", "passed"]
    assert model.history[0].role == "author"


def test_edits_to_files_not_under_review_are_refused(make_repo: RepoFactory) -> None:
    change, files = buggy_change(make_repo)
    sneaky = edit("def test_add():\n", "def test_add_disabled():\n", path="tests/test_mod.py")
    result = run(change, files, scripted(revise(), sneaky, sneaky), Settings(tests=False))
    assert result.rounds[0].outcome == "edit-failed"
    assert "not under review" in result.rounds[0].note


def test_progress_is_reported(make_repo: RepoFactory) -> None:
    change, files = buggy_change(make_repo)
    seen: list[tuple[str, int]] = []

    class Recorder:
        def phase(self, name: str, round_number: int, tokens: int) -> None:
            seen.append((name, round_number))

    run(change, files, scripted(revise(), FIX, PASS), Settings(tests=False), progress=Recorder())
    assert seen[:4] == [("signals", 0), ("critic", 1), ("reviser", 1), ("signals", 1)]


def test_lint_already_in_a_whole_file_reaches_the_critic_as_context(tmp_path: Path) -> None:
    """Outside git the file is reviewed whole: its old E741 is shown as context, not as the change's."""
    write_files(
        tmp_path, {"pyproject.toml": "[project]\nname = 'p'\n", "mod.py": "def f(l):\n    return l\n"}
    )
    change = from_worktree([Path("mod.py")], cwd=tmp_path, repo=None, max_bytes=1 << 20)
    model = scripted(PASS)
    settings = Settings(tests=False)
    with Evaluator(change, settings, SubprocessRunner(), {"PATH": "/usr/bin:/bin"}, ["mod.py"]) as evaluator:
        refine(change, settings, model, evaluator, intent="tidy")
    introduced, context = model.history[0].messages[0].text.split(CONTEXT_NOTE)
    assert "E741" in context and "E741" not in introduced


def test_a_file_reviewed_whole_is_named_as_such_not_by_every_function_in_it(tmp_path: Path) -> None:
    module = "".join(f"def f{n}(x):\n    return x + {n}\n\n\n" for n in range(30))
    write_files(tmp_path, {"pyproject.toml": "[project]\nname = 'p'\n", "mod.py": module})
    change = from_worktree([Path("mod.py")], cwd=tmp_path, repo=None, max_bytes=1 << 20)
    model = scripted(PASS)
    settings = Settings(tests=False)
    with Evaluator(change, settings, SubprocessRunner(), {"PATH": "/usr/bin:/bin"}, ["mod.py"]) as evaluator:
        refine(change, settings, model, evaluator, intent="tidy")
    task = model.history[0].messages[0].text
    assert "Functions and classes the change touches" not in task
    assert "Under review whole (no version before the change to compare with): mod.py" in task


def test_a_revision_that_undoes_the_change_keeps_the_critic_on_the_lines_it_rewrote(
    make_repo: RepoFactory,
) -> None:
    good = str(SMALL_PROJECT["pkg/mod.py"]) + "".join(
        f"\n\ndef f{n}(x):\n    return x + {n}\n" for n in range(300)
    )
    root = make_repo({**SMALL_PROJECT, "pkg/mod.py": good})
    write_files(root, {"pkg/mod.py": good.replace("return a + b", "return a - b")})
    repo = GitRepo.find(root)
    change = from_worktree([Path("pkg/mod.py")], cwd=root, repo=repo, max_bytes=1 << 20)
    model = scripted(revise(), FIX, PASS)
    run(change, project_files(root, repo), model, Settings(confirm="always", merge="never", tests=False))
    confirming = model.history[2]
    assert confirming.role == "critic" and "There is no diff" in confirming.messages[0].text
    code = confirming.system[-1].text
    assert "only the parts this change touches are shown" in code and "return a + b" in code
    assert "return x + 250" not in code  # the other 1,200 lines stay an outline


def test_a_small_local_model_is_sent_a_smaller_signals_section_unless_the_budget_was_chosen(
    make_repo: RepoFactory,
) -> None:
    """Eighty tests fail at one helper's assert: a gguf: model's 8k context gets a signals section of
    about 512 tokens, a hosted model's the default 1,500, and a budget the user set is kept."""
    helper = "from pkg.mod import add\n\n\ndef check(n):\n    assert add(n, 1) == n + 1, f'add({n}, 1)'\n\n"
    tests = helper + "".join(f"\ndef test_add_{n}():\n    check({n})\n\n" for n in range(80))

    root = make_repo({**SMALL_PROJECT, "tests/test_mod.py": tests})
    write_files(root, {"pkg/mod.py": BUGGY})
    repo = GitRepo.find(root)
    change = from_worktree([Path("pkg/mod.py")], cwd=root, repo=repo, max_bytes=1 << 20)

    def signals_of(settings: Settings) -> str:
        model = scripted(revise(), FIX, PASS, PASS)
        run(change, project_files(root, repo), model, settings)
        assert model.history[0].role == "critic"
        text = model.history[0].messages[0].text
        section = text[text.index("Signals introduced") :]
        return section.split(SPEC_HEADING)[0]  # the tests' source has a budget of its own

    hosted = signals_of(Settings(model="claude-sonnet-4-5"))
    small = signals_of(Settings(model="gguf:qwen2.5-coder-0.5b", edit_format="search-replace"))
    chosen = signals_of(
        Settings(
            model="gguf:qwen2.5-coder-0.5b",
            edit_format="search-replace",
            sources={"signal_tokens": "pyproject.toml"},
        )
    )
    assert len(small) < 512 * 4 + 600 < len(hosted)
    assert chosen == hosted
    assert "more that failed the same way" in small
