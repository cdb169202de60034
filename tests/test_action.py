"""The GitHub Action (action.yml): its metadata against the action-metadata rules, and its steps run as a
runner runs them — the step script, with GitHub's environment, on a real git clone, against a scripted
Anthropic API and a fake GitHub API served on loopback."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from threading import Thread
from typing import Any

import httpx2
import pytest
import yaml

from tests.conftest import SMALL_PROJECT, RepoFactory, git, write_files
from tests.fake_api import FakeAnthropic, loopback_server, text_message, tool_message
from tests.fake_github import PULL, REPO, FakeGitHub

ROOT = Path(__file__).resolve().parents[1]
ACTION = ROOT / "action.yml"
SCRIPT = ROOT / "hooks" / "github" / "coderefine_action.py"
EVENT = Path(__file__).parent / "data" / "github-pull-request-synchronize.json"
# The review workflows (the bench matrix of coderefine-bench-matrix.yml runs on demand and reviews nothing).
WORKFLOWS = sorted(p for p in (ROOT / "hooks" / "github").glob("coderefine-review*.yml"))
FEATURE = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
SHA = re.compile(r"^[0-9a-f]{40}$")
# What the action-metadata schema allows (docs: metadata syntax for GitHub Actions).
INPUT_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
TOP_KEYS = {"name", "author", "description", "inputs", "outputs", "runs", "branding"}
STEP_KEYS = {
    "name",
    "id",
    "if",
    "run",
    "shell",
    "uses",
    "with",
    "env",
    "working-directory",
    "continue-on-error",
}


def metadata() -> dict[str, Any]:
    data = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_action_metadata_follows_the_schema_rules() -> None:
    data = metadata()
    assert {"name", "description", "runs"} <= data.keys() <= TOP_KEYS
    assert data["runs"]["using"] == "composite"
    for name, spec in data["inputs"].items():
        assert INPUT_NAME.match(name), name
        assert spec.get("description") and set(spec) <= {"description", "required", "default"}, name
        assert isinstance(spec.get("default", ""), str), f"{name}: an input's default is a string"
    for name, spec in data["outputs"].items():
        assert INPUT_NAME.match(name) and spec["description"] and spec["value"], name
    steps = data["runs"]["steps"]
    for step in steps:
        assert set(step) <= STEP_KEYS, step
        assert ("run" in step) != ("uses" in step), step
        if "run" in step:
            assert step.get("shell"), f"a composite run step needs shell: {step.get('name')}"
        else:
            reference = step["uses"].split("@")[1].split()[0]
            assert SHA.match(reference), f"{step['uses']}: pin third-party actions to a commit"


def test_every_input_is_used_and_every_reference_is_declared() -> None:
    text = ACTION.read_text(encoding="utf-8")
    declared = set(metadata()["inputs"])
    referenced = set(re.findall(r"inputs\.([A-Za-z0-9_-]+)", text))
    assert referenced == declared
    # Each input reaches the script as INPUT_<NAME>, which the script reads back with '-' for '_'.
    passed = set(re.findall(r"INPUT_([A-Z_]+):", text))
    assert {name.lower().replace("_", "-") for name in passed} <= declared
    ids = {step.get("id") for step in metadata()["runs"]["steps"]}
    assert set(re.findall(r"steps\.([a-z-]+)\.outputs", text)) <= ids


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: p.name)
def test_shipped_workflows_are_uses_of_the_action_and_fork_safe(workflow: Path) -> None:
    data = yaml.safe_load(workflow.read_text(encoding="utf-8"))
    assert list(data[True]) == ["pull_request"]  # YAML 1.1 reads the key `on` as True
    assert data["permissions"] == {"contents": "read"}
    for job in data["jobs"].values():
        steps = job["steps"]
        ours = [s for s in steps if s.get("uses", "").startswith("coderefine/coderefine@")]
        assert len(ours) == 1, "one coderefine step per job: the action"
        assert not any("coderefine" in s.get("run", "") for s in steps), "no hand-written coderefine run"
        for step in steps:
            if "uses" in step and step not in ours:
                assert SHA.match(step["uses"].split("@")[1]), step["uses"]
            if step.get("uses", "").startswith("actions/checkout@"):
                assert step["with"]["persist-credentials"] is False
    assert "pull_request_target" not in workflow.read_text().replace("never `pull_request_target`", "")


def event(head_repo: str, cwd: Path) -> dict[str, Any]:
    """The pull_request payload GitHub sends (tests/data), for this clone and this head repository."""
    data: dict[str, Any] = json.loads(EVENT.read_text(encoding="utf-8"))
    pull = data["pull_request"]
    head_sha = git(cwd, "rev-parse", "HEAD").strip()
    pull["head"]["sha"] = data["after"] = head_sha
    pull["base"]["sha"] = git(cwd, "rev-parse", "origin/main").strip()
    pull["head"]["repo"]["full_name"] = head_repo
    pull["head"]["repo"]["fork"] = head_repo != REPO
    assert data["repository"]["full_name"] == REPO and pull["number"] == PULL
    return data


@pytest.fixture
def clone(make_repo: RepoFactory, tmp_path: Path) -> Path:
    """A checkout as actions/checkout leaves it: origin/main fetched, the PR head checked out."""
    origin = make_repo(SMALL_PROJECT)
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", str(origin), str(work))
    git(work, "checkout", "-q", "-b", "feature")
    write_files(work, {"pkg/mod.py": FEATURE})
    git(work, "commit", "-qam", "Make add faster")
    return work


@contextmanager
def github_server(fake: FakeGitHub) -> Iterator[str]:
    """FakeGitHub (an httpx2 handler) on 127.0.0.1, for a coderefine in another process."""

    class Handler(BaseHTTPRequestHandler):
        def _any(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            request = httpx2.Request(
                self.command,
                f"https://api.github.test{self.path}",
                headers=dict(self.headers),
                content=self.rfile.read(length),
            )
            response = fake.handler(request)
            self.send_response(response.status_code)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(response.content)))
            self.end_headers()
            self.wfile.write(response.content)

        do_GET = do_POST = do_PATCH = _any

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def run_step(
    step: str, cwd: Path, tmp_path: Path, head_repo: str, **extra: str
) -> tuple[int, str, dict[str, str]]:
    """One step of action.yml as a runner runs it; returns its exit code, log and GITHUB_OUTPUT."""
    event_path = tmp_path / "event.json"
    event_path.write_text(json.dumps(event(head_repo, cwd)), encoding="utf-8")
    outputs = tmp_path / "output"
    outputs.write_text("")
    env = {
        "PATH": os.environ["PATH"],
        "HOME": os.environ["HOME"],
        "CI": "true",
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event_path),
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_BASE_REF": "main",
        "GITHUB_HEAD_REF": "feature",
        "GITHUB_WORKSPACE": str(cwd),
        "GITHUB_ACTION_PATH": str(ROOT),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GITHUB_OUTPUT": str(outputs),
        "RUNNER_TEMP": str(tmp_path / "runner-temp"),
        # action.yml's defaults, as the runner fills them in
        "INPUT_FAIL_ON": "error",
        "INPUT_GITHUB_REVIEW": "auto",
        "INPUT_GITHUB_TOKEN": "test-token",
        "INPUT_COMMAND": "review",
        "INPUT_JOB_SUMMARY": "true",
        "ACTION_CODEREFINE": str(Path(sys.executable).parent / "coderefine"),
        **{key: value for key, value in os.environ.items() if key.startswith("GIT_")},
        **extra,
    }
    done = subprocess.run(
        [sys.executable, str(SCRIPT), step], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )
    pairs = (line.split("=", 1) for line in outputs.read_text().splitlines() if "=" in line)
    return done.returncode, done.stdout + done.stderr, dict(pairs)


def test_a_pull_request_of_the_repository_is_reviewed_and_published(clone: Path, tmp_path: Path) -> None:
    critique = {
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
    fix = "pkg/mod.py\n```python\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n```\n"
    model = FakeAnthropic([tool_message(critique), text_message(fix)])
    github = FakeGitHub({"pkg/mod.py": set(range(1, 20))})
    with loopback_server(model) as api, github_server(github) as gh:
        code, log, outputs = run_step(
            "review",
            clone,
            tmp_path,
            REPO,
            ANTHROPIC_API_KEY="sk-ant-test",
            ANTHROPIC_BASE_URL=api,
            GITHUB_API_URL=gh,
            INPUT_SARIF="coderefine.sarif",
        )
    assert code == 1, log
    assert outputs == {"exit-code": "1", "github-review": "true", "sarif": "coderefine.sarif"}
    assert "coderefine review --base origin/main --fail-on error --format github" in log
    assert "::error " in log  # the annotations
    summary = (tmp_path / "summary.md").read_text()
    assert "<!-- coderefine:summary -->" in summary and "add subtracts" in summary
    assert json.loads((clone / "coderefine.sarif").read_text())["version"] == "2.1.0"
    assert model.requests, "the critic was asked"
    assert "Make add faster" in json.dumps(model.requests[0])  # the intent: the pull request's title
    bodies = [c["body"] for c in github.review_comments] + [c["body"] for c in github.issue_comments]
    assert any("```suggestion" in body and "return a + b" in body for body in bodies)


def test_a_fork_gets_signals_and_no_review_and_no_token(clone: Path, tmp_path: Path) -> None:
    github = FakeGitHub({})
    with github_server(github) as gh:
        code, log, outputs = run_step(
            "review", clone, tmp_path, "stranger/project", GITHUB_API_URL=gh, GITHUB_TOKEN="test-token"
        )
    assert code == 1, log  # test_add fails on the head
    assert outputs["github-review"] == "false"
    assert "from a fork" in log and "--github-review" not in log
    assert github.calls == []
    summary = (tmp_path / "summary.md").read_text()
    assert "model step was skipped" in summary and "test_add" in summary


def test_github_review_true_is_not_honoured_on_a_fork(clone: Path, tmp_path: Path) -> None:
    _, log, outputs = run_step(
        "review", clone, tmp_path, "stranger/project", INPUT_GITHUB_REVIEW="true", INPUT_ARGS="--no-tests"
    )
    assert outputs["github-review"] == "false", log
    assert "read-only token" in log


def test_pull_request_target_is_refused_with_the_fix(clone: Path, tmp_path: Path) -> None:
    code, log, _ = run_step("review", clone, tmp_path, REPO, GITHUB_EVENT_NAME="pull_request_target")
    assert code == 2
    assert "::error title=coderefine action::" in log and "Trigger the workflow on pull_request" in log
    assert "not run" in (tmp_path / "summary.md").read_text()


def test_an_early_exit_still_writes_the_job_summary(clone: Path, tmp_path: Path) -> None:
    code, log, outputs = run_step("review", clone, tmp_path, REPO, INPUT_BASE="origin/nosuchbranch")
    assert code == 2, log
    assert outputs["exit-code"] == "2"
    assert "exited 2: a usage or configuration error" in (tmp_path / "summary.md").read_text()


def test_inputs_are_checked_before_anything_runs(clone: Path, tmp_path: Path) -> None:
    code, log, _ = run_step("review", clone, tmp_path, REPO, INPUT_FAIL_ON="sometimes")
    assert code == 2 and "fail-on must be one of" in log


@pytest.mark.slow
def test_the_install_step_installs_the_actions_own_source_into_its_own_venv(
    clone: Path, tmp_path: Path
) -> None:
    code, log, outputs = run_step("install", clone, tmp_path, REPO, INPUT_VERSION="")
    assert code == 0, log
    installed = Path(outputs["coderefine"])
    assert installed.is_relative_to(tmp_path / "runner-temp")
    version = subprocess.run([str(installed), "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.startswith("coderefine ")
