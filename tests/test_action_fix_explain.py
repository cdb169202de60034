"""/coderefine fix and /coderefine explain, run as a runner runs the comment workflow's command job: the fix as
suggestions or a pushed commit, a finding's thread, and the hunks a suggestion is made of."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.action_comments import (
    REVIEW,
    answers,
    comment_payload,
    fix_script,
    hook_module,
    make_clone,
    pull_object,
    run_step,
)
from tests.conftest import RepoFactory, git
from tests.fake_api import FakeAnthropic, loopback_server
from tests.fake_github import REPO
from tests.fake_github_commands import FakeGitHubCommands
from tests.test_action import github_server


@pytest.fixture
def clone(make_repo: RepoFactory, tmp_path: Path) -> Path:
    return make_clone(make_repo, tmp_path)


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
