"""`coderefine init` on real projects of three layouts: what it shows, what it writes, what it leaves alone.

Each project is a git repository with real code and tests; after ``init --yes`` its settings load, its
pre-commit config passes pre-commit's own validation, its workflow is one step of the action, and
``coderefine check`` finds and runs the tests related to a changed module, as ``fix`` and the hook will.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from coderefine.cli.main import main
from coderefine.config import load_settings
from coderefine.doors.init import REPOSITORY, Pin, installed_pin, pre_commit_entry, workflow
from coderefine.project.layout import detect_layout
from coderefine.version import __version__
from tests.conftest import RepoFactory, git, write_files
from tests.paths import REPO_ROOT

CODE = "def add(a, b):\n    return a + b\n"
PYPROJECT = (
    '[project]\nname = "calc"\nversion = "1.0"\n\n'
    '[project.optional-dependencies]\ntest = ["pytest"]\n\n'
    "[tool.ruff]\nline-length = 100   # kept as it is\n"
)
LAYOUTS: dict[str, dict[str, str | bytes]] = {
    "flat": {
        "pyproject.toml": PYPROJECT,
        "calc/__init__.py": "",
        "calc/ops.py": CODE,
        "tests/test_ops.py": "from calc.ops import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
        "setup.py": "from setuptools import setup\nsetup()\n",
    },
    "src": {
        "pyproject.toml": PYPROJECT,
        "src/calc/__init__.py": "from calc.ops import add\n",
        "src/calc/ops.py": CODE,
        "tests/test_ops.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    },
    "in-package": {
        "pyproject.toml": PYPROJECT + '\n[tool.pytest.ini_options]\ntestpaths = ["calc/tests"]\n',
        "calc/__init__.py": "",
        "calc/ops.py": CODE,
        "calc/tests/__init__.py": "",
        "calc/tests/test_ops.py": "from calc.ops import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    },
}
EXPECTED = {
    "flat": ("flat layout", ("calc",), ("tests",)),
    "src": ("src/ layout", ("src/calc",), ("tests",)),
    "in-package": ("tests inside the package", ("calc",), ("calc/tests",)),
}
MODULE = {"flat": "calc/ops.py", "src": "src/calc/ops.py", "in-package": "calc/ops.py"}


RELEASE = Pin(REPOSITORY, f"v{__version__}", "the release tag; or the full SHA of a commit")


@pytest.fixture(autouse=True)
def from_a_release(monkeypatch: pytest.MonkeyPatch) -> None:
    """init as run from an installed release: these tests run from a clone, which init pins instead
    (the tests of that say so and put the real ``installed_pin`` back)."""
    monkeypatch.setattr("coderefine.doors.init.installed_pin", lambda version: RELEASE)


def init(root: Path, *args: str, stdin: io.StringIO | None = None) -> tuple[int, str]:
    out = io.StringIO()
    code = main(["init", "--root", str(root), *args], out=out, stdin=stdin or io.StringIO())
    return code, out.getvalue()


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_init_yes_makes_each_layout_ready(
    make_repo: RepoFactory, layout: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo(LAYOUTS[layout])
    before = (root / "pyproject.toml").read_bytes()
    kind, sources, tests = EXPECTED[layout]
    found = detect_layout(root)
    assert (found.kind, found.sources, found.test_folders, found.test_files) == (kind, sources, tests, 1)

    code, text = init(root, "--yes")
    assert code == 0, text
    assert f"found: {kind}" in text and "wrote pyproject.toml, .pre-commit-config.yaml" in text

    after = (root / "pyproject.toml").read_bytes()
    assert after.startswith(before), "the rest of pyproject.toml is kept byte for byte"
    table = tomllib.loads(after.decode())["tool"]["coderefine"]
    assert table == {"test-command": ["{python}", "-m", "pytest"], "tests": True}
    assert f"# Found: {kind}; {sources[0]}/" in after.decode()[len(before) :]
    settings = load_settings(root, {})
    assert settings.sources == {"test_command": "pyproject.toml", "tests": "pyproject.toml"}

    config = yaml.safe_load((root / ".pre-commit-config.yaml").read_text())
    assert config["repos"] == [
        {"repo": REPOSITORY, "rev": f"v{__version__}", "hooks": [{"id": "coderefine"}]}
    ]
    validate = subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-config", ".pre-commit-config.yaml"],
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert validate.returncode == 0, validate.stdout + validate.stderr

    workflow = yaml.safe_load((root / ".github/workflows/coderefine-review.yml").read_text())
    steps = workflow["jobs"]["review"]["steps"]
    assert steps[-1]["uses"] == f"coderefine/coderefine@v{__version__}"
    assert steps[-2]["run"] == 'python -m pip install -e ".[test]"'

    # Ready for fix and the hook: a change to the module finds its test and runs it.
    write_files(root, {MODULE[layout]: CODE.replace("a + b", "a - b")})
    out = io.StringIO()
    monkeypatch.chdir(root)  # from inside the project, as its user runs it
    assert main(["check", MODULE[layout], "--format", "json"], out=out) == 1
    report = json.loads(out.getvalue())
    assert any("test_add" in json.dumps(s) for s in report["introduced"]), report


def test_a_second_run_writes_nothing_and_says_what_it_skipped(make_repo: RepoFactory) -> None:
    root = make_repo(LAYOUTS["flat"])
    assert init(root, "--yes")[0] == 0
    snapshot = {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and ".git" not in p.parts}
    code, text = init(root, "--yes")
    assert code == 0
    assert "skipped pyproject.toml: it already has a [tool.coderefine] table" in text
    assert "skipped .pre-commit-config.yaml: it already has a coderefine hook" in text
    assert "skipped .github/workflows/coderefine-review.yml: it exists" in text
    assert "nothing to write" in text
    assert snapshot == {p: p.read_bytes() for p in snapshot}


def test_dry_run_shows_everything_and_writes_nothing(make_repo: RepoFactory) -> None:
    root = make_repo(LAYOUTS["src"])
    code, text = init(root, "--dry-run")
    assert code == 0
    assert "append to pyproject.toml:" in text and "  | [tool.coderefine]" in text
    assert (
        "create .pre-commit-config.yaml:" in text
        and "create .github/workflows/coderefine-review.yml:" in text
    )
    assert "nothing written" in text
    assert git(root, "status", "--porcelain") == ""


def test_without_yes_it_refuses_when_it_cannot_ask(
    make_repo: RepoFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_repo(LAYOUTS["flat"])
    code, _ = init(root)
    assert code == 2
    assert "pass --yes to write the files shown, or --dry-run" in capsys.readouterr().err
    assert git(root, "status", "--porcelain") == ""


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("answer", "written"), [("y\n", True), ("\n", False)])
def test_it_asks_on_a_terminal(make_repo: RepoFactory, answer: str, written: bool) -> None:
    root = make_repo(LAYOUTS["flat"])
    code, text = init(root, stdin=Terminal(answer))
    assert code == 0 and "write these files? [y/N]" in text
    assert (root / ".pre-commit-config.yaml").exists() is written


def test_an_existing_pre_commit_config_gets_the_entry_appended_in_its_own_style(
    make_repo: RepoFactory,
) -> None:
    existing = (
        "# my hooks\r\n"
        "repos:\r\n"
        "- repo: https://github.com/astral-sh/ruff-pre-commit\r\n"
        "  rev: v0.6.0\r\n"
        "  hooks:\r\n"
        "  - id: ruff\r\n"
        "\r\n"
        "default_stages: [pre-commit]\r\n"
        "ci:\r\n"
        "  autofix_prs: false\r\n"
    )
    root = make_repo({**LAYOUTS["flat"], ".pre-commit-config.yaml": existing.encode()})
    code, text = init(root, "--yes")
    assert code == 0
    data = (root / ".pre-commit-config.yaml").read_bytes()
    assert b"\n" not in data.replace(b"\r\n", b""), "the file's own line endings"
    entry = "\r\n" + pre_commit_entry(RELEASE, "").rstrip("\n").replace("\n", "\r\n")
    assert data.decode().replace(entry, "", 1) == existing, "only inserted: every other byte kept"
    config = yaml.safe_load(data)
    assert [r["repo"] for r in config["repos"]][1] == REPOSITORY
    assert config["default_stages"] == ["pre-commit"] and config["ci"] == {"autofix_prs": False}
    assert (
        "- repo: https://github.com/coderefine/coderefine" in data.decode()
    )  # the dash at column 0, as theirs
    assert "ci: skip: [coderefine]" in text


def test_a_flow_style_repos_list_is_left_alone_with_the_entry_to_paste(make_repo: RepoFactory) -> None:
    root = make_repo({**LAYOUTS["flat"], ".pre-commit-config.yaml": "repos: [{repo: local, hooks: []}]\n"})
    code, text = init(root, "--yes")
    assert code == 0
    assert "skipped .pre-commit-config.yaml: its repos: list is not a block list" in text
    assert "  |   - repo: https://github.com/coderefine/coderefine" in text
    assert (root / ".pre-commit-config.yaml").read_text() == "repos: [{repo: local, hooks: []}]\n"


def test_a_workflow_that_already_uses_the_action_is_respected(make_repo: RepoFactory) -> None:
    mine = "jobs:\n  x:\n    steps:\n      - uses: coderefine/coderefine@v0.1.0\n"
    root = make_repo({**LAYOUTS["flat"], ".github/workflows/mine.yml": mine})
    code, text = init(root, "--yes")
    assert code == 0 and "mine.yml already uses the coderefine action" in text
    assert not (root / ".github/workflows/coderefine-review.yml").exists()


def test_without_pyproject_the_defaults_apply_and_it_says_so(make_repo: RepoFactory) -> None:
    root = make_repo(
        {
            "calc.py": CODE,
            "test_calc.py": "import calc\n\n\ndef test_add():\n    assert calc.add(1, 2) == 3\n",
        }
    )
    code, text = init(root, "--yes")
    assert code == 0
    assert "skipped pyproject.toml: there is none; coderefine's defaults apply" in text
    assert not (root / "pyproject.toml").exists()
    assert (root / ".pre-commit-config.yaml").exists()
    assert "python -m pip install pytest" in (root / ".github/workflows/coderefine-review.yml").read_text()


def test_a_pyproject_without_a_final_newline_is_appended_after_a_blank_line(make_repo: RepoFactory) -> None:
    root = make_repo({**LAYOUTS["flat"], "pyproject.toml": PYPROJECT.rstrip("\n")})
    assert init(root, "--yes")[0] == 0
    text = (root / "pyproject.toml").read_text()
    assert text.startswith(PYPROJECT.rstrip("\n") + "\n\n[tool.coderefine]\n")


def test_invalid_pyproject_is_a_clear_error_and_nothing_is_written(
    make_repo: RepoFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_repo({**LAYOUTS["flat"], "pyproject.toml": "[project\n"})
    assert init(root, "--yes")[0] == 2
    assert "pyproject.toml is not valid TOML" in capsys.readouterr().err
    assert not (root / ".pre-commit-config.yaml").exists()


def test_installed_from_a_commit_pins_that_commit() -> None:
    sha = "a" * 40
    direct = json.dumps(
        {"url": "https://github.com/someone/coderefine.git", "vcs_info": {"vcs": "git", "commit_id": sha}}
    )
    pin = installed_pin("0.1.0", lambda name: direct if name == "direct_url.json" else None)
    assert (pin.repository, pin.rev) == ("https://github.com/someone/coderefine", sha)
    assert installed_pin("0.1.0", lambda name: None).rev == "v0.1.0"


def test_installed_from_a_clone_pins_the_clone_and_its_commit_and_says_so(tmp_path: Path) -> None:
    sha = "b" * 40
    clone = tmp_path / "coderefine"
    direct = json.dumps({"url": clone.as_uri(), "dir_info": {"editable": True}})
    pin = installed_pin("0.1.0", lambda name: direct, lambda folder: (sha, folder == clone))
    assert (pin.repository, pin.rev, pin.source, pin.dirty) == (str(clone), sha, str(clone), True)
    entry = pre_commit_entry(pin, "  ")
    assert f"# coderefine runs from the clone at {clone} (commit bbbbbbbbbbbb), not a release:" in entry
    assert "pin https://github.com/coderefine/coderefine and its tag (docs/releasing.md)" in entry
    assert yaml.safe_load("repos:\n" + entry)["repos"][0]["rev"] == sha
    action = yaml.safe_load(workflow(pin, "pip install -e ."))["jobs"]["review"]["steps"][-1]["uses"]
    assert action == f"coderefine/coderefine@{sha}"
    assert "GitHub finds only once it is pushed there" in workflow(pin, "pip install -e .")
    # a folder that is no git clone (an unpacked sdist) has no commit to pin: the version's tag
    assert installed_pin("0.1.0", lambda name: direct, lambda folder: None).rev == "v0.1.0"


def test_init_from_this_clone_pins_it_and_notes_its_uncommitted_work(
    make_repo: RepoFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("coderefine.doors.init.installed_pin", installed_pin)
    root = make_repo(LAYOUTS["flat"])
    code, text = init(root, "--dry-run")
    assert code == 0
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert f"- repo: {REPO_ROOT}" in text and f"rev: {head}" in text
    assert f"note: no coderefine release is pinned: you run it from the clone at {REPO_ROOT}" in text


def test_the_written_workflow_is_the_shipped_one_with_the_install_step() -> None:
    shipped = yaml.safe_load((REPO_ROOT / "hooks/github/coderefine-review.yml").read_text())
    written = yaml.safe_load(workflow(RELEASE, "python -m pip install -e ."))
    steps = [s for s in written["jobs"]["review"]["steps"] if "run" not in s]
    assert steps == shipped["jobs"]["review"]["steps"]
    assert {k: v for k, v in written.items() if k != "jobs"} == {
        k: v for k, v in shipped.items() if k != "jobs"
    }
    assert {k: v for k, v in written["jobs"]["review"].items() if k != "steps"} == {
        k: v for k, v in shipped["jobs"]["review"].items() if k != "steps"
    }


def test_top_level_tooling_is_no_source_beside_packages(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "lib/__init__.py": "",
            "lib/tests/test_x.py": "",
            "versioneer.py": "",
            "release.py": "",
            "setup.py": "",
        },
    )
    assert detect_layout(tmp_path).sources == ("lib",)
    single = tmp_path / "single"
    write_files(single, {"six.py": "", "test_six.py": "", "setup.py": ""})
    found = detect_layout(single)
    assert (found.sources, found.test_folders, found.test_files) == (("six.py",), (), 1)
    assert found.install == "python -m pip install -e . pytest"
