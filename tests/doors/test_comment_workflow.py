"""The comment workflow `coderefine init` writes, and --reviews: when the pull request workflow reviews."""

from __future__ import annotations

import io
from pathlib import Path

import yaml

from coderefine.cli.main import main
from coderefine.doors.comment_workflow import commands_workflow
from coderefine.doors.init import ACTION
from tests.conftest import RepoFactory
from tests.paths import REPO_ROOT

PROJECT: dict[str, str | bytes] = {
    "pyproject.toml": '[project]\nname = "calc"\nversion = "1.0"\n',
    "calc/__init__.py": "",
    "calc/ops.py": "def add(a, b):\n    return a + b\n",
    "tests/test_ops.py": "from calc.ops import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
}
REVIEW = ".github/workflows/coderefine-review.yml"
COMMANDS = ".github/workflows/coderefine-commands.yml"


def init(root: Path, *args: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(["init", "--root", str(root), *args], out=out)
    return code, out.getvalue()


def test_the_written_comment_workflow_is_the_shipped_one_with_the_install_step() -> None:
    shipped = yaml.safe_load((REPO_ROOT / "hooks/github/coderefine-commands.yml").read_text())
    written = yaml.safe_load(commands_workflow(ACTION, "v0.1.0", "python -m pip install -e ."))
    install = written["jobs"]["command"]["steps"].pop(2)
    assert install == {
        "name": "Install the project, so that its tests can run",
        "run": "python -m pip install -e .",
    }
    assert written == shipped


def test_init_writes_the_comment_workflow_beside_the_review_on_every_push(make_repo: RepoFactory) -> None:
    root = make_repo(PROJECT)
    code, text = init(root, "--yes")
    assert code == 0, text
    assert "pull requests: review every push of a pull request, and on request" in text
    review = yaml.safe_load((root / REVIEW).read_text())
    assert review[True]["pull_request"]["types"] == ["opened", "synchronize", "reopened", "ready_for_review"]
    commands = yaml.safe_load((root / COMMANDS).read_text())
    assert set(commands[True]) == {"issue_comment", "pull_request_review_comment"}
    assert commands["jobs"]["command"]["steps"][2]["run"] == review["jobs"]["review"]["steps"][2]["run"]
    assert "/coderefine review on a pull request" in text
    again = init(root, "--yes")[1]
    assert f"skipped {COMMANDS}: it exists" in again and "nothing to write" in again


def test_reviews_opened_reviews_once_then_on_request(make_repo: RepoFactory) -> None:
    root = make_repo(PROJECT)
    code, text = init(root, "--yes", "--reviews", "opened")
    assert code == 0, text
    review = yaml.safe_load((root / REVIEW).read_text())
    assert review[True]["pull_request"]["types"] == ["opened", "reopened", "ready_for_review"]
    assert "# When: review once when a pull request is opened" in (root / REVIEW).read_text()
    assert (root / COMMANDS).is_file()


def test_reviews_on_request_only_writes_no_pull_request_workflow(make_repo: RepoFactory) -> None:
    root = make_repo(PROJECT)
    code, text = init(root, "--yes", "--reviews", "request")
    assert code == 0, text
    assert not (root / REVIEW).exists()
    assert f"skipped {REVIEW}: reviews on request only (--reviews request)" in text
    assert (root / COMMANDS).is_file()


def test_a_workflow_that_answers_commands_already_is_respected(make_repo: RepoFactory) -> None:
    mine = "jobs:\n  x:\n    steps:\n      - uses: coderefine/coderefine@v0.1.0\n        with:\n          command: gate\n"
    root = make_repo({**PROJECT, ".github/workflows/mine.yml": mine})
    code, text = init(root, "--yes")
    assert code == 0, text
    assert "mine.yml already answers /coderefine commands" in text and not (root / COMMANDS).exists()
    assert (root / REVIEW).is_file(), "a comment workflow is no review workflow"
