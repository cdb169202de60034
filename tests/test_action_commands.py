"""Commands in pull request comments, run as a runner runs the comment workflow: GitHub's issue_comment and
pull_request_review_comment payloads, the action's step script (gate, then comment) on a real clone, a
scripted Anthropic API and a fake GitHub API on loopback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import SMALL_PROJECT, RepoFactory, git, write_files
from tests.fake_api import FakeAnthropic, loopback_server, text_message, tool_message
from tests.fake_github import PULL, REPO
from tests.fake_github_commands import FakeGitHubCommands
from tests.test_action import github_server

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "hooks" / "github" / "coderefine_action.py"
WORKFLOW = ROOT / "hooks" / "github" / "coderefine-commands.yml"
DATA = Path(__file__).parent / "data"
FEATURE = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
CRITIQUE = {
    "verdict": "revise",
    "summary": "add is wrong",
    "issues": [
        {
            "title": "add subtracts",
            "severity": "error",
            "file": "pkg/mod.py",
            "line": 2,
            "evidence": "return a - b",
            "explanation": "a sum is wanted",
            "suggestion": "use +",
        }
    ],
}
FIX_BLOCK = "pkg/mod.py\n```python\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n```\n"
PASS = {"verdict": "pass", "summary": "correct now", "issues": []}
# A review with --no-tests: the critique, the fix, and the critique that confirms it (no tests to say so).
REVIEW = [tool_message(CRITIQUE), text_message(FIX_BLOCK), tool_message(PASS)]
# A test file of the pull request that tells on its run: whatever it can read of the environment.
TELLTALE = (
    "import os, pathlib\n\n\ndef test_telltale():\n"
    "    pathlib.Path(os.environ['TELLTALE']).write_text(repr(sorted(os.environ.items())))\n"
)


@pytest.fixture
def clone(make_repo: RepoFactory, tmp_path: Path) -> Path:
    """The second job's checkout: origin/main fetched, the pull request's head checked out."""
    origin = make_repo(SMALL_PROJECT)
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", str(origin), str(work))
    git(work, "checkout", "-q", "-b", "feature")
    write_files(work, {"pkg/mod.py": FEATURE})
    git(work, "commit", "-qam", "Make add faster")
    return work


def pull_object(cwd: Path, head_repo: str) -> dict[str, Any]:
    """The pull request as GET /repos/{repo}/pulls/{n} returns it (the event's shape), for this clone."""
    data: dict[str, Any] = json.loads((DATA / "github-pull-request-synchronize.json").read_text())
    pull: dict[str, Any] = data["pull_request"]
    pull["head"]["sha"] = git(cwd, "rev-parse", "HEAD").strip()
    pull["base"]["sha"] = git(cwd, "rev-parse", "origin/main").strip()
    pull["head"]["repo"]["full_name"] = head_repo
    pull["head"]["repo"]["fork"] = head_repo != REPO
    return pull


def comment_payload(
    body: str, association: str = "MEMBER", *, thread: bool = False, on_pull: bool = True
) -> tuple[str, dict[str, Any]]:
    """GitHub's payload of a new comment: on the conversation (issue_comment) or in a review thread."""
    name = "pull_request_review_comment" if thread else "issue_comment"
    file = (
        "github-pull-request-review-comment-created.json" if thread else "github-issue-comment-created.json"
    )
    data: dict[str, Any] = json.loads((DATA / file).read_text())
    data["comment"]["body"] = body
    data["comment"]["author_association"] = association
    if not on_pull:
        del data["issue"]["pull_request"]
    return name, data


def run_step(
    step: str, cwd: Path, tmp_path: Path, payload: tuple[str, dict[str, Any]], **extra: str
) -> tuple[int, str, dict[str, str]]:
    """One step of action.yml under a comment event, as a runner runs it; exit code, log and outputs."""
    event_path = tmp_path / "event.json"
    event_path.write_text(json.dumps(payload[1]), encoding="utf-8")
    outputs = tmp_path / f"output-{step}"
    outputs.write_text("")
    env = {
        "PATH": os.environ["PATH"],
        "HOME": os.environ["HOME"],
        "CI": "true",
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": payload[0],
        "GITHUB_EVENT_PATH": str(event_path),
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_WORKSPACE": str(cwd),
        "GITHUB_ACTION_PATH": str(ROOT),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GITHUB_OUTPUT": str(outputs),
        "GITHUB_RUN_ID": "4242",
        "RUNNER_TEMP": str(tmp_path / "runner-temp"),
        "TELLTALE": str(tmp_path / "telltale.txt"),
        # action.yml's defaults, as the runner fills them in
        "INPUT_FAIL_ON": "error",
        "INPUT_GITHUB_REVIEW": "auto",
        "INPUT_GITHUB_TOKEN": "test-token",
        "INPUT_COMMAND": step,
        "INPUT_JOB_SUMMARY": "true",
        "INPUT_ALLOWED_ASSOCIATIONS": "OWNER,MEMBER,COLLABORATOR",
        "INPUT_FIX_PUSH": "false",
        "ACTION_CODEREFINE": str(Path(sys.executable).parent / "coderefine") if step == "comment" else "",
        **{key: value for key, value in os.environ.items() if key.startswith("GIT_")},
        **extra,
    }
    (tmp_path / "runner-temp").mkdir(exist_ok=True)
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "review"], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )
    pairs = (line.split("=", 1) for line in outputs.read_text().splitlines() if "=" in line)
    return done.returncode, done.stdout + done.stderr, dict(pairs)


def answers(github: FakeGitHubCommands) -> list[str]:
    """What coderefine said on the pull request: conversation comments and thread replies."""
    return [c["body"] for c in github.issue_comments] + [r["body"] for r in github.replies]


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


def fix_script() -> list[Any]:
    """coderefine fix on the head: the critique, the fix, and a confirming critique."""
    return [tool_message(CRITIQUE), text_message(FIX_BLOCK), tool_message(PASS)]


def test_a_members_fix_comes_back_as_verified_suggestions(clone: Path, tmp_path: Path) -> None:
    github = FakeGitHubCommands(pull_object(clone, REPO), {"pkg/mod.py": set(range(1, 7))})
    model = FakeAnthropic(fix_script())
    payload = comment_payload("/coderefine fix add must add, not subtract")
    with loopback_server(model) as api, github_server(github) as gh:
        code, log, _ = run_step(
            "comment",
            clone,
            tmp_path,
            payload,
            GITHUB_API_URL=gh,
            ANTHROPIC_API_KEY="sk-ant-test",
            ANTHROPIC_BASE_URL=api,
        )
    assert code == 0, log
    assert "add must add, not subtract" in json.dumps(model.requests[0])  # the comment's intent
    (review,) = github.reviews
    assert review["commit_id"] == github.pull["head"]["sha"] and review["event"] == "COMMENT"
    (comment,) = review["comments"]
    assert comment["path"] == "pkg/mod.py" and comment["line"] == 2 and comment["side"] == "RIGHT"
    assert "```suggestion\n    return a + b\n```" in comment["body"]
    assert answers(github) == [
        "coderefine fix: 1 verified suggestion(s) in a review, for: add must add, not subtract"
    ]


def test_fix_push_commits_to_the_pull_request_branch(clone: Path, tmp_path: Path) -> None:
    server = tmp_path / "server"
    (server / "octo").mkdir(parents=True)
    git(tmp_path, "clone", "-q", "--bare", str(clone), str(server / "octo" / "project.git"))
    github = FakeGitHubCommands(pull_object(clone, REPO))
    model = FakeAnthropic(fix_script())
    payload = comment_payload("/coderefine fix add must add")
    with loopback_server(model) as api, github_server(github) as gh:
        code, log, _ = run_step(
            "comment",
            clone,
            tmp_path,
            payload,
            GITHUB_API_URL=gh,
            GITHUB_SERVER_URL=f"file://{server}",
            ANTHROPIC_API_KEY="sk-ant-test",
            ANTHROPIC_BASE_URL=api,
            INPUT_FIX_PUSH="true",
        )
    assert code == 0, log
    pushed = server / "octo" / "project.git"
    assert git(pushed, "log", "-1", "--format=%B", "feature").startswith(
        "coderefine fix: add must add\n\nAsked by @alice"
    )
    assert "return a + b" in git(pushed, "show", "feature:pkg/mod.py")
    (reply,) = answers(github)
    assert reply.startswith("coderefine fix pushed `") and "to `feature`" in reply
    assert github.reviews == []


def test_explain_in_a_findings_thread_gives_its_evidence_and_the_signals(clone: Path, tmp_path: Path) -> None:
    github = FakeGitHubCommands(pull_object(clone, REPO), {"pkg/mod.py": set(range(1, 7))})
    model = FakeAnthropic(REVIEW * 2)
    env = {"ANTHROPIC_API_KEY": "sk-ant-test", "INPUT_ARGS": "--no-tests"}
    with loopback_server(model) as api, github_server(github) as gh:
        code, log, _ = run_step(
            "comment",
            clone,
            tmp_path,
            comment_payload("/coderefine review"),
            GITHUB_API_URL=gh,
            ANTHROPIC_BASE_URL=api,
            **env,
        )
        assert code == 0, log
        (finding,) = github.review_comments
        name, payload = comment_payload("/coderefine explain", thread=True)
        payload["comment"]["in_reply_to_id"] = finding["id"]
        payload["pull_request"] = github.pull
        code, log, outputs = run_step("gate", clone, tmp_path, (name, payload), GITHUB_API_URL=gh)
        assert outputs["run"] == "true", log
        assert ("pulls", 900002, "eyes") in github.reactions
        code, log, _ = run_step(
            "comment", clone, tmp_path, (name, payload), GITHUB_API_URL=gh, ANTHROPIC_BASE_URL=api, **env
        )
    assert code == 0, log
    (reply,) = github.replies
    assert reply["in_reply_to"] == finding["id"]  # in the finding's own thread
    assert reply["body"].startswith("**add subtracts** — `coderefine/critic-error`, error, from the critic")
    assert "Evidence: return a - b" in reply["body"] and "Signals of this head" in reply["body"]
    assert len(github.review_comments) == 1, "explain publishes nothing again"


def test_explain_outside_coderefines_threads_says_so(clone: Path, tmp_path: Path) -> None:
    github = FakeGitHubCommands(pull_object(clone, REPO), {"pkg/mod.py": {2}})
    github.review_comments.append({"id": 900000, "path": "pkg/mod.py", "line": 2, "body": "nit: spacing"})
    name, payload = comment_payload("/coderefine explain", thread=True)
    payload["pull_request"] = github.pull
    with github_server(github) as gh:
        code, log, _ = run_step("comment", clone, tmp_path, (name, payload), GITHUB_API_URL=gh)
    assert code == 0, log
    assert [r["body"] for r in github.replies] == [
        "This thread is not one of coderefine's findings: reply `/coderefine explain` to one."
    ]


def hook_module(name: str) -> Any:
    """A module of hooks/github (the step script's siblings), imported as the script imports it."""
    folder = str(ROOT / "hooks" / "github")
    if folder not in sys.path:
        sys.path.insert(0, folder)
    return __import__(name)


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


def test_a_fixs_insertion_becomes_a_suggestion_on_its_neighbour() -> None:
    commands = hook_module("coderefine_suggestions")
    diff = (
        "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n"
        "@@ -2,0 +3,2 @@\n+    x = 1\n+    y = 2\n"
        "@@ -5 +7 @@\n-    return a\n+    return b\n"
        "@@ -9,2 +10,0 @@\n-    pass\n-    pass\n"
    )
    head = [
        "def f(a):",
        "    '''doc'''",
        "    a += 1",
        "",
        "    return a",
        "",
        "",
        "",
        "    pass",
        "    pass",
    ]
    hunks = commands.fix_hunks(diff, lambda path: head)
    assert [(h.start, h.end, h.lines) for h in hunks] == [
        (2, 2, ("    '''doc'''", "    x = 1", "    y = 2")),
        (5, 5, ("    return b",)),
        (9, 10, ()),
    ]
    shown = commands.right_lines("+++ b/m.py\n@@ -1,3 +1,4 @@\n+++ /dev/null\n@@ -1 +0,0 @@\n")
    assert shown == {"m.py": {1, 2, 3, 4}}


def test_a_refused_push_is_answered_without_the_token(clone: Path, tmp_path: Path) -> None:
    github = FakeGitHubCommands(pull_object(clone, REPO))
    model = FakeAnthropic(fix_script())
    with loopback_server(model) as api, github_server(github) as gh:
        code, log, _ = run_step(
            "comment",
            clone,
            tmp_path,
            comment_payload("/coderefine fix add must add"),
            GITHUB_API_URL=gh,
            GITHUB_SERVER_URL=f"file://{tmp_path}/nowhere",
            ANTHROPIC_API_KEY="sk-ant-test",
            ANTHROPIC_BASE_URL=api,
            INPUT_FIX_PUSH="true",
        )
    assert code == 3, log
    (reply,) = answers(github)
    assert reply.startswith("coderefine fix failed: git push failed:") and "/actions/runs/4242" in reply
    assert "(fix-push needs contents: write in the command job)" in reply
    assert "test-token" not in reply and "eC1hY2Nlc3MtdG9rZW46dGVzdC10b2tlbg" not in reply  # nor its base64


def runner_inputs(step: dict[str, Any]) -> dict[str, str]:
    """A `uses:` step's inputs as the runner hands them to action.yml: its `with:` over the defaults."""
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    values = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    values.update({name: str(value) for name, value in step.get("with", {}).items()})
    values["github-token"] = "test-token"  # its default, ${{ github.token }}
    return {f"INPUT_{name.upper().replace('-', '_')}": value for name, value in values.items()}


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


def test_fix_in_a_findings_thread_fixes_that_finding_in_its_file(clone: Path, tmp_path: Path) -> None:
    github = FakeGitHubCommands(pull_object(clone, REPO), {"pkg/mod.py": set(range(1, 7))})
    github.review_comments.append(
        {
            "id": 900000,
            "path": "pkg/mod.py",
            "line": 2,
            "side": "RIGHT",
            "body": "**error: add subtracts** (`coderefine/critic-error`)\n\nuse +\n\n<!-- coderefine:fp=abc123 -->",
        }
    )
    name, payload = comment_payload("/coderefine fix", thread=True)
    payload["pull_request"] = github.pull
    model = FakeAnthropic(fix_script())
    with loopback_server(model) as api, github_server(github) as gh:
        code, log, _ = run_step(
            "comment",
            clone,
            tmp_path,
            (name, payload),
            GITHUB_API_URL=gh,
            ANTHROPIC_API_KEY="sk-ant-test",
            ANTHROPIC_BASE_URL=api,
        )
    assert code == 0, log
    intent = "Fix this review finding at pkg/mod.py line 2:\\n**error: add subtracts** (`coderefine/critic-error`)\\n\\nuse +"
    assert intent in json.dumps(model.requests[0])
    assert "Make add faster" not in json.dumps(model.requests[0])
    (review,) = github.reviews
    assert "return a + b" in review["comments"][0]["body"]
    assert github.replies[-1]["in_reply_to"] == 900000
    assert github.replies[-1]["body"].startswith(
        "coderefine fix: 1 verified suggestion(s) in a review, for: Fix this"
    )
