"""The real pre-commit framework runs coderefine's hooks from this repository (``pre-commit try-repo``).

pre-commit installs coderefine into an environment of its own the first time (from the package index,
like any user's machine); PRE_COMMIT_HOME is shared by the tests of a session so that happens once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import SMALL_PROJECT, RepoFactory, git, write_files
from tests.refiner.test_loop import BUGGY, FIX, PASS, revise

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


def replay_file(path: Path, *replies: tuple[str, object]) -> Path:
    lines = []
    for role, reply in replies:
        body = {"tool_input": reply} if isinstance(reply, dict) else {"text": reply}
        lines.append(json.dumps({"role": role, "reply": body}))
    path.write_text("\n".join(lines) + "\n")
    return path


def try_repo(
    root: Path, hook: str, home: Path, replay: Path, tests: bool = False
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": str(home),
        "CODEREFINE_MODEL": f"replay:{replay}",
        "CODEREFINE_TESTS": "true" if tests else "false",
    }
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(REPO_ROOT), hook, "--verbose"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


@pytest.fixture
def staged_bug(make_repo: RepoFactory) -> Path:
    root = make_repo(SMALL_PROJECT)
    write_files(root, {"pkg/mod.py": BUGGY})
    git(root, "add", "pkg/mod.py")
    return root


@pytest.mark.slow
def test_fix_hook_changes_the_file_and_fails(staged_bug: Path, pre_commit_home: Path, tmp_path: Path) -> None:
    replay = replay_file(tmp_path / "fix.jsonl", ("critic", revise()), ("reviser", FIX), ("critic", PASS))
    done = try_repo(staged_bug, "coderefine", pre_commit_home, replay, tests=True)
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "files were modified by this hook" in output
    assert "return a + b" in (staged_bug / "pkg/mod.py").read_text()


@pytest.mark.slow
def test_check_hook_fails_a_bad_change_then_hits_the_cache(
    staged_bug: Path, pre_commit_home: Path, tmp_path: Path
) -> None:
    replay = replay_file(
        tmp_path / "check.jsonl", ("critic", revise())
    )  # one reply: a second call would fail
    first = try_repo(staged_bug, "coderefine-check", pre_commit_home, replay)
    assert first.returncode == 1, first.stdout + first.stderr
    assert "add subtracts" in first.stdout
    assert (staged_bug / "pkg/mod.py").read_text() == BUGGY
    second = try_repo(staged_bug, "coderefine-check", pre_commit_home, replay)
    assert second.returncode == 1, second.stdout + second.stderr
    assert "(cached)" in second.stdout and "1 from the cache" in second.stdout


@pytest.mark.slow
def test_check_hook_passes_a_clean_change(
    make_repo: RepoFactory, pre_commit_home: Path, tmp_path: Path
) -> None:
    root = make_repo(SMALL_PROJECT)
    write_files(
        root, {"pkg/mod.py": str(SMALL_PROJECT["pkg/mod.py"]) + "\n\ndef sub(a, b):\n    return a - b\n"}
    )
    git(root, "add", "pkg/mod.py")
    replay = replay_file(tmp_path / "pass.jsonl", ("critic", PASS))
    done = try_repo(root, "coderefine-check", pre_commit_home, replay)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow
def test_init_from_this_clone_writes_a_hook_the_framework_runs(
    make_repo: RepoFactory, pre_commit_home: Path, tmp_path: Path
) -> None:
    """As a new user of the README does: coderefine installed from its clone (the tests' own editable
    install), ``init --yes`` in a project, and the hook it wrote run by pre-commit on a staged bug."""
    import re

    import yaml

    root = make_repo(SMALL_PROJECT)
    done = subprocess.run(
        [sys.executable, "-m", "coderefine", "init", "--yes"], cwd=root, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no coderefine release is pinned: you run it from the clone" in done.stdout
    config = yaml.safe_load((root / ".pre-commit-config.yaml").read_text())
    (entry,) = config["repos"]
    assert entry["repo"] == str(REPO_ROOT) and re.fullmatch(r"[0-9a-f]{40}", entry["rev"])
    write_files(root, {"pkg/mod.py": BUGGY})
    git(root, "add", "-A")  # pre-commit refuses an unstaged configuration
    replay = replay_file(tmp_path / "fix.jsonl", ("critic", revise()), ("reviser", FIX))
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": str(pre_commit_home),
        "CODEREFINE_MODEL": f"replay:{replay}",
        "CODEREFINE_TESTS": "true",
    }
    hook = subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--files", "pkg/mod.py"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    output = hook.stdout + hook.stderr
    assert hook.returncode == 1, output
    assert "files were modified by this hook" in output
    assert "return a + b" in (root / "pkg/mod.py").read_text()


def test_the_readme_snippet_names_the_release_tag_and_the_workflow_the_release() -> None:
    """The tag ``v<version>`` is created at each release; the README's snippet names it, and shows how to
    pin a commit instead, so that it does not depend on a tag existing."""
    import re

    from coderefine.version import __version__

    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    revs = re.findall(r"^\s+rev: (\S+)", readme, re.M)
    assert revs[0] == f"v{__version__}"
    assert any(re.fullmatch(r"[0-9a-f]{40}", rev) for rev in revs), "a commit pin is shown"
    assert "pin a commit" in readme and "autoupdate" in readme and "git ls-remote" in readme
    for name in ("coderefine-review.yml", "coderefine-review-matrix.yml"):
        workflow = (REPO_ROOT / "hooks" / "github" / name).read_text(encoding="utf-8")
        assert f"uses: coderefine/coderefine@v{__version__}" in workflow
