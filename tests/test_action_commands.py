"""Commands in pull request comments, run as a runner runs the comment workflow: GitHub's issue_comment and
pull_request_review_comment payloads, the action's step script (gate, then comment) on a real clone, a
scripted Anthropic API and a fake GitHub API on loopback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.action_comments import (
    CRITIQUE,
    FEATURE,
    FIX_BLOCK,
    PASS,
    REVIEW,
    TELLTALE,
    WORKFLOW,
    answers,
    comment_payload,
    hook_module,
    make_clone,
    pull_object,
    run_step,
    runner_inputs,
)
from tests.conftest import SMALL_PROJECT, RepoFactory, git, write_files
from tests.fake_api import FakeAnthropic, loopback_server, text_message, tool_message
from tests.fake_github import PULL, REPO
from tests.fake_github_commands import FakeGitHubCommands
from tests.test_action import github_server


@pytest.fixture
def clone(make_repo: RepoFactory, tmp_path: Path) -> Path:
    return make_clone(make_repo, tmp_path)


def test_a_members_review_command_is_acknowledged_then_reviewed(clone: Path, tmp_path: Path) -> None:
    github = FakeGitHubCommands(pull_object(clone, REPO), {"pkg/mod.py": set(range(1, 7))})
    model = FakeAnthropic(REVIEW)
    payload = comment_payload("/coderefine review")
    with loopback_server(model) as api, github_server(github) as gh:
        code, log, outputs = run_step("gate", clone, tmp_path, payload, GITHUB_API_URL=gh)
        assert code == 0, log
        assert outputs == {"run": "true", "command": "review", "head-sha": github.pull["head"]["sha"]}
        assert github.reactions == [("issues", 900001, "eyes")]  # acknowledged at once
        assert answers(github) == [] and model.requests == []  # the gate runs nothing
        code, log, outputs = run_step(
            "comment",
            clone,
            tmp_path,
            payload,
            GITHUB_API_URL=gh,
            ANTHROPIC_API_KEY="sk-ant-test",
            ANTHROPIC_BASE_URL=api,
            INPUT_ARGS="--no-tests",
        )
    assert code == 0, log
    assert model.requests, "the critic was asked"
    assert "Make add faster" in json.dumps(model.requests[0])  # the intent: the pull request's title
    assert "--github-review" in log
    suggestions = [c["body"] for c in github.review_comments]
    assert any("```suggestion" in body and "return a + b" in body for body in suggestions)
    replies = answers(github)
    assert any("<!-- coderefine:summary -->" in body for body in replies)
    assert any(
        body.startswith(f"coderefine reviewed `{github.pull['head']['sha'][:10]}`: 1 error")
        for body in replies
    )


def test_a_head_reviewed_before_is_not_paid_for_twice_unless_asked_again(clone: Path, tmp_path: Path) -> None:
    github = FakeGitHubCommands(pull_object(clone, REPO), {"pkg/mod.py": set(range(1, 7))})
    model = FakeAnthropic(REVIEW * 2)
    env = {"ANTHROPIC_API_KEY": "sk-ant-test", "INPUT_ARGS": "--no-tests"}
    bodies = ["/coderefine review", "/coderefine review", "/coderefine review again"]
    asked = []
    with loopback_server(model) as api, github_server(github) as gh:
        for body in bodies:
            code, log, _ = run_step(
                "comment",
                clone,
                tmp_path,
                comment_payload(body),
                GITHUB_API_URL=gh,
                ANTHROPIC_BASE_URL=api,
                **env,
            )
            assert code == 0, log
            asked.append(len(model.requests))
    assert asked == [3, 3, 6]  # the second request costs no model call
    head = github.pull["head"]["sha"][:10]
    replies = [c["body"] for c in github.issue_comments if "coderefine:summary" not in c["body"]]
    assert replies[1].startswith(f"coderefine already reviewed `{head}`, the head now")
    assert replies[2].startswith(f"coderefine reviewed `{head}`")
    assert "Inline: 1 new, 0 already posted, 0 resolved since." in replies[0]
    assert "Inline: 0 new, 1 already posted, 0 resolved since." in replies[2]
    assert len(github.review_comments) == 1  # the finding of the first review is kept, not posted again
    assert sum("<!-- coderefine:summary -->" in c["body"] for c in github.issue_comments) == 1


def test_the_pull_request_workflows_review_of_the_head_counts(clone: Path, tmp_path: Path) -> None:
    github = FakeGitHubCommands(pull_object(clone, REPO))
    base, head = github.pull["base"]["sha"][:10], github.pull["head"]["sha"][:10]
    summary = f"## coderefine review\n<!-- coderefine:summary -->\n\n**no findings** in `{base}..{head}`"
    github.issue_comments.append({"id": 5, "body": summary})
    with github_server(github) as gh:
        code, log, _ = run_step(
            "comment", clone, tmp_path, comment_payload("/coderefine review"), GITHUB_API_URL=gh
        )
    assert code == 0, log
    assert github.issue_comments[-1]["body"].startswith(f"coderefine already reviewed `{head}`")


def test_a_strangers_command_is_refused_in_one_line_with_no_model_call(clone: Path, tmp_path: Path) -> None:
    github = FakeGitHubCommands(pull_object(clone, REPO))
    model = FakeAnthropic([tool_message(CRITIQUE)])
    payload = comment_payload("/coderefine review", association="NONE")
    with loopback_server(model) as api, github_server(github) as gh:
        for step in ("gate", "comment"):
            code, log, outputs = run_step(
                step,
                clone,
                tmp_path,
                payload,
                GITHUB_API_URL=gh,
                ANTHROPIC_API_KEY="sk-ant-test",
                ANTHROPIC_BASE_URL=api,
            )
            assert code == 0, log
    assert outputs["exit-code"] == "0"
    assert model.requests == []
    assert not (tmp_path / "telltale.txt").exists(), "the pull request's tests never ran"
    refusal = answers(github)[0]
    assert len(refusal.splitlines()) == 1
    assert refusal == (
        "@alice: coderefine commands run only for authors whose association with this repository is "
        "OWNER, MEMBER or COLLABORATOR (yours: NONE); nothing was run."
    )
    assert ("GET", f"/repos/{REPO}/pulls/{PULL}") not in github.calls and github.reactions == []


def test_allowed_associations_widen_who_may(clone: Path, tmp_path: Path) -> None:
    github = FakeGitHubCommands(pull_object(clone, REPO))
    payload = comment_payload("/coderefine review", association="CONTRIBUTOR")
    with github_server(github) as gh:
        _, log, outputs = run_step(
            "gate",
            clone,
            tmp_path,
            payload,
            GITHUB_API_URL=gh,
            INPUT_ALLOWED_ASSOCIATIONS="member, contributor",
        )
    assert outputs["run"] == "true", log


def test_a_forks_fix_never_runs_its_code_nor_sees_a_secret(clone: Path, tmp_path: Path) -> None:
    write_files(clone, {"tests/test_telltale.py": TELLTALE})
    git(clone, "add", "-A")
    git(clone, "commit", "-qm", "A test that tells")
    github = FakeGitHubCommands(pull_object(clone, "stranger/project"))
    model = FakeAnthropic([tool_message(CRITIQUE), text_message(FIX_BLOCK), tool_message(PASS)])
    payload = comment_payload("/coderefine fix make add add", association="OWNER")
    with loopback_server(model) as api, github_server(github) as gh:
        for step in ("gate", "comment"):
            code, log, outputs = run_step(
                step,
                clone,
                tmp_path,
                payload,
                GITHUB_API_URL=gh,
                ANTHROPIC_API_KEY="sk-ant-secret",
                ANTHROPIC_BASE_URL=api,
            )
            assert code == 0, log
            assert "refused: a fork (stranger/project)" in log
    assert outputs["exit-code"] == "0"
    assert model.requests == []
    assert not (tmp_path / "telltale.txt").exists(), "the fork's code never ran in a job with secrets"
    assert "coderefine fix" not in log and "sk-ant-secret" not in log
    assert all("comes from a fork (stranger/project)" in body for body in answers(github))
    assert git(clone, "status", "--porcelain") == ""


def test_a_command_on_a_plain_issue_is_ignored(clone: Path, tmp_path: Path) -> None:
    github = FakeGitHubCommands(pull_object(clone, REPO))
    payload = comment_payload("/coderefine review", on_pull=False)
    with github_server(github) as gh:
        for step in ("gate", "comment"):
            code, log, outputs = run_step(step, clone, tmp_path, payload, GITHUB_API_URL=gh)
            assert code == 0, log
            assert "ignored: #7 is an issue, not a pull request" in log
            assert outputs.get("run", "false") == "false"
    assert github.calls == []


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("/coderefine help", "coderefine commands (in a comment on this pull request):"),
        ("/coderefine", "coderefine commands (in a comment on this pull request):"),
        (
            "/coderefine frobnicate now",
            "@alice: unknown command `frobnicate`; the known ones: `/coderefine review`",
        ),
        ("/coderefine explain", "@alice: `/coderefine explain` answers in the thread of a finding"),
    ],
)
def test_help_and_unknown_commands_are_answered_by_the_gate(
    clone: Path, tmp_path: Path, body: str, expected: str
) -> None:
    github = FakeGitHubCommands(pull_object(clone, REPO))
    with github_server(github) as gh:
        code, log, outputs = run_step("gate", clone, tmp_path, comment_payload(body), GITHUB_API_URL=gh)
    assert code == 0 and outputs["run"] == "false", log
    (reply,) = answers(github)
    assert reply.startswith(expected)


def test_a_comment_that_is_no_command_costs_no_call(clone: Path, tmp_path: Path) -> None:
    github = FakeGitHubCommands(pull_object(clone, REPO))
    with github_server(github) as gh:
        code, log, outputs = run_step(
            "gate", clone, tmp_path, comment_payload("LGTM, but /coderefine review later?"), GITHUB_API_URL=gh
        )
    assert code == 0 and outputs["run"] == "false" and github.calls == [], log


def test_the_comment_workflow_checks_out_nothing_before_the_gate() -> None:
    data = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    assert set(data[True]) == {"issue_comment", "pull_request_review_comment"}  # YAML 1.1 reads `on` as True
    assert data["permissions"] == {}
    gate, command = data["jobs"]["gate"], data["jobs"]["command"]
    assert [step["with"]["command"] for step in gate["steps"]] == ["gate"]
    assert all("run" not in step and not step["uses"].startswith("actions/") for step in gate["steps"])
    assert gate["permissions"] == {"pull-requests": "write"}
    assert command["needs"] == "gate" and command["if"] == "needs.gate.outputs.run == 'true'"
    checkout = command["steps"][0]
    assert checkout["uses"].startswith("actions/checkout@")
    assert checkout["with"]["ref"] == "${{ needs.gate.outputs.head-sha }}"
    assert checkout["with"]["persist-credentials"] is False
    assert command["steps"][-1]["with"]["command"] == "comment"
    assert "pull_request_target" not in WORKFLOW.read_text()


@pytest.mark.parametrize(
    ("body", "verb", "argument"),
    [
        ("/coderefine review", "review", ""),
        ("  /coderefine   FIX keep the API\nand its docstring  ", "fix", "keep the API\nand its docstring"),
        ("/coderefine", "help", ""),
        ("\n/coderefine explain\n", "explain", ""),
        ("/coderefinery review", None, None),
        ("please /coderefine review", None, None),
        ("> /coderefine review\nquoted", None, None),
    ],
)
def test_a_command_is_the_first_line_of_a_comment(body: str, verb: str | None, argument: str | None) -> None:
    command = hook_module("coderefine_comment").parse_command(body)
    assert (command.verb, command.argument) == (verb, argument) if verb else command is None


def test_the_readme_steps_take_a_sample_project_to_a_review_reply(
    make_repo: RepoFactory, tmp_path: Path
) -> None:
    """README, "Reviews on request": init, commit the workflows, open a pull request, comment, get a reply.
    The workflow is the one init wrote, its jobs run in order, their steps with the inputs they declare."""
    origin = make_repo(SMALL_PROJECT)
    code = subprocess.run(
        [str(Path(sys.executable).parent / "coderefine"), "init", "--yes", "--root", str(origin)],
        capture_output=True,
        text=True,
    )
    assert code.returncode == 0, code.stdout + code.stderr
    git(origin, "add", "-A")
    git(origin, "commit", "-qm", "Add coderefine")
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", str(origin), str(work))
    git(work, "checkout", "-q", "-b", "feature")
    write_files(work, {"pkg/mod.py": FEATURE})
    git(work, "commit", "-qam", "Make add faster")
    github = FakeGitHubCommands(pull_object(work, REPO), {"pkg/mod.py": set(range(1, 7))})
    git(work, "checkout", "-q", "main")  # a fresh runner's checkout is not the head yet
    flow = yaml.safe_load((origin / ".github/workflows/coderefine-commands.yml").read_text())
    gate, command = flow["jobs"]["gate"], flow["jobs"]["command"]
    payload = comment_payload("/coderefine review")
    assert payload[1]["issue"]["pull_request"] and payload[1]["comment"]["body"].startswith("/coderefine")
    model = FakeAnthropic(REVIEW)
    with loopback_server(model) as api, github_server(github) as gh:
        (step,) = gate["steps"]
        code, log, outputs = run_step(
            "gate", work, tmp_path, payload, GITHUB_API_URL=gh, **runner_inputs(step)
        )
        assert code == 0 and outputs["run"] == "true", log
        checkout, _, install, action = command["steps"]
        assert checkout["with"]["ref"] == "${{ needs.gate.outputs.head-sha }}" and install["run"]
        git(work, "checkout", "-q", outputs["head-sha"])
        secrets = {"ANTHROPIC_API_KEY": "sk-ant-test"}
        env = {name: secrets[name] for name in action["env"]}
        inputs = {**runner_inputs(action), "INPUT_ARGS": "--no-tests"}
        code, log, _ = run_step(
            "comment", work, tmp_path, payload, GITHUB_API_URL=gh, ANTHROPIC_BASE_URL=api, **env, **inputs
        )
    assert code == 0, log
    assert github.reactions == [("issues", 900001, "eyes")]
    assert answers(github)[-1].startswith("coderefine reviewed `")
    assert any("```suggestion" in c["body"] for c in github.review_comments)


def test_a_forks_review_comment_run_with_a_read_only_token_refuses_quietly(
    clone: Path, tmp_path: Path
) -> None:
    github = FakeGitHubCommands(pull_object(clone, "stranger/project"))
    github.read_only = True
    name, payload = comment_payload("/coderefine fix", thread=True)
    payload["pull_request"] = github.pull
    with github_server(github) as gh:
        code, log, outputs = run_step("gate", clone, tmp_path, (name, payload), GITHUB_API_URL=gh)
    assert code == 0 and outputs["run"] == "false", log
    assert "::warning title=coderefine::could not answer the comment" in log and "nothing was run" in log
