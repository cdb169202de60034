"""What the tests of the comment commands share: GitHub's comment payloads for a clone, the step script run
as a runner runs it, and the scripted model's answers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import SMALL_PROJECT, RepoFactory, git, write_files
from tests.fake_api import text_message, tool_message
from tests.fake_github import REPO
from tests.fake_github_commands import FakeGitHubCommands

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


def make_clone(make_repo: RepoFactory, tmp_path: Path) -> Path:
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


def fix_script() -> list[Any]:
    """coderefine fix on the head: the critique, the fix, and a confirming critique."""
    return [tool_message(CRITIQUE), text_message(FIX_BLOCK), tool_message(PASS)]


def hook_module(name: str) -> Any:
    """A module of hooks/github (the step script's siblings), imported as the script imports it."""
    folder = str(ROOT / "hooks" / "github")
    if folder not in sys.path:
        sys.path.insert(0, folder)
    return __import__(name)


def runner_inputs(step: dict[str, Any]) -> dict[str, str]:
    """A `uses:` step's inputs as the runner hands them to action.yml: its `with:` over the defaults."""
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    values = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    values.update({name: str(value) for name, value in step.get("with", {}).items()})
    values["github-token"] = "test-token"  # its default, ${{ github.token }}
    return {f"INPUT_{name.upper().replace('-', '_')}": value for name, value in values.items()}
