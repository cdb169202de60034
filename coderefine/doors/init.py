"""`coderefine init`: the files a project needs to start, planned first, written only on request.

Four things, each written only when it is not there yet: the ``[tool.coderefine]`` table (appended to
pyproject.toml, whose bytes stay as they were), the pre-commit entry (appended to the ``repos:`` of an
existing .pre-commit-config.yaml, or a new one), the pull request workflow (one step: the action), and the
comment workflow (``/coderefine review`` and the other commands). When the pull request workflow reviews
is the team's choice (``reviews``): every push, once when a pull request is opened, or only on request.
Nothing is ever overwritten; what is left alone is said, with the reason.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from urllib.parse import urlparse
from urllib.request import url2pathname

from coderefine.config import Settings, load_settings
from coderefine.doors.comment_workflow import COMMAND_STEP, REVIEW_TYPES, REVIEWS, commands_workflow
from coderefine.errors import ConfigError, UsageError
from coderefine.project.layout import Layout
from coderefine.project.writes import atomic_write

REPOSITORY = "https://github.com/coderefine/coderefine"
ACTION = "coderefine/coderefine"
PYPROJECT = "pyproject.toml"
PRE_COMMIT = ".pre-commit-config.yaml"
WORKFLOW = ".github/workflows/coderefine-review.yml"
COMMANDS_WORKFLOW = ".github/workflows/coderefine-commands.yml"
# The defaults shown (commented) in the new table: the ones a project changes first.
_SHOWN_DEFAULTS = {
    "model": "PROVIDER:MODEL or a bare Anthropic name",
    "rounds": "critique -> revise rounds of one run",
    "fail-on": "error | warning | info | never",
    "hook-mode": "fix | check | signals (no model)",
    "jobs": "files the hook or a sweep works on at once",
    "python": "the tests' interpreter; default .venv, venv, then VIRTUAL_ENV",
    "test-timeout": "seconds per test",
    "run-timeout": "seconds for the whole test run",
    "max-cost": "dollars one run may spend",
}


@dataclass(frozen=True)
class Pin:
    """Where the hook and the action come from: the release tag, or the commit installed from."""

    repository: str
    rev: str
    note: str  # the comment beside rev
    source: str = ""  # a local clone's path when coderefine runs from one (no release to pin)
    dirty: bool = False  # that clone has changes its commit lacks

    def comment(self, indent: str, action: bool = False) -> str:
        """The lines above a pin of a local clone, saying what it is and what to pin once released."""
        if not self.source:
            return ""
        lines = [
            f"coderefine runs from the clone at {self.source} (commit {self.rev[:12]}), not a release:",
            "the action runs that commit, which GitHub finds only once it is pushed there;"
            if action
            else "this pins that clone and commit, which works on this machine;",
            f"once a release is published, pin {REPOSITORY} and its tag (docs/releasing.md).",
        ]
        return "".join(f"{indent}# {line}\n" for line in lines)


def clone_commit(folder: Path) -> tuple[str, bool] | None:
    """The commit a git clone at ``folder`` is at, and whether tracked files differ from it."""
    from coderefine.errors import GitError
    from coderefine.project.gitio import GitRepo

    try:
        repo = GitRepo.find(folder)
        if repo is None or not repo.has_head():
            return None
        return repo.rev_parse("HEAD"), bool(repo.tracked_changes())
    except GitError:
        return None


@dataclass(frozen=True)
class PlannedFile:
    path: str  # relative to the project root, with '/'
    action: str  # "create" or "append"
    before: bytes | None  # the file as it was planned on (None: absent)
    after: bytes
    added: str  # the text that is new, to show


@dataclass(frozen=True)
class InitPlan:
    files: tuple[PlannedFile, ...]
    skipped: tuple[tuple[str, str], ...]  # (path, why)
    notes: tuple[str, ...] = ()  # what the user should know and init does not do for them


def installed_pin(
    version: str,
    read_text: Callable[[str], str | None] | None = None,
    commit_of: Callable[[Path], tuple[str, bool] | None] = clone_commit,
) -> Pin:
    """What the user has: the commit coderefine was installed from (pip install git+...); the local
    clone and its commit when installed from a folder (pip install [-e] PATH); else, installed from
    a package index, the tag of its release."""
    if read_text is None:

        def read_text(name: str) -> str | None:
            try:
                return metadata.distribution("coderefine").read_text(name)
            except metadata.PackageNotFoundError:
                return None

    try:
        direct = json.loads(read_text("direct_url.json") or "{}")
    except ValueError:
        direct = {}
    commit = direct.get("vcs_info", {}).get("commit_id", "") if isinstance(direct, dict) else ""
    if isinstance(commit, str) and re.fullmatch(r"[0-9a-f]{40}", commit):
        url = str(direct.get("url", REPOSITORY)).removeprefix("git+").removesuffix(".git")
        repository = url if url.startswith("https://") else REPOSITORY
        return Pin(repository, commit, f"coderefine {version}, a commit")
    url = str(direct.get("url", "")) if isinstance(direct, dict) else ""
    if url.startswith("file://") and "dir_info" in direct:
        folder = Path(url2pathname(urlparse(url).path))
        found = commit_of(folder)
        if found is not None:
            sha, dirty = found
            return Pin(str(folder), sha, f"coderefine {version}, the clone's commit", str(folder), dirty)
    return Pin(REPOSITORY, f"v{version}", "the release tag; or the full SHA of a commit")


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, tuple | list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(value)  # a TOML basic string is a JSON string for what settings hold


def coderefine_table(layout: Layout, version: str, defaults: Settings) -> str:
    config = f"; pytest configured in {layout.pytest_config}" if layout.pytest_config else ""
    lines = [
        "[tool.coderefine]",
        f"# Written by `coderefine init` (coderefine {version}); every key: docs/configuration.md.",
        f"# Found: {layout.describe()}{config}.",
        "# The hook and `coderefine review` look at the changed files; a sweep takes folders:",
        f'#   coderefine fix {layout.sources[0] if layout.sources else "."} -m "what to change"',
        "test-command = " + _toml_value(defaults.test_command),
    ]
    if layout.test_files == 0:
        lines += ["# No test files were found: coderefine runs none until there are some.", "tests = false"]
    else:
        lines.append('tests = true            # the tests related to a change; "all" for the whole suite')
    lines.append("# Defaults, to change here:")
    for key, note in _SHOWN_DEFAULTS.items():
        setting = f"# {key} = {_toml_value(getattr(defaults, key.replace('-', '_')))}"
        lines.append(f"{setting:<32}# {note}")
    return "\n".join(lines) + "\n"


def pre_commit_entry(pin: Pin, indent: str) -> str:
    """One item of ``repos:``, its dash at ``indent``."""
    inner = indent + "  "
    return pin.comment(indent) + (
        f"{indent}- repo: {pin.repository}\n"
        f"{inner}rev: {pin.rev}  # {pin.note}\n"
        f"{inner}hooks:\n"
        f"{inner}  - id: coderefine  # refine the staged change; needs a model (ANTHROPIC_API_KEY)\n"
        f"{inner}  # - id: coderefine-signals  # or: ruff, format, tests and syntax only, no model\n"
    )


def _action_ref(pin: Pin) -> str:
    return pin.rev if pin.rev.startswith("v") else f"{pin.rev} # {pin.note}"


def workflow(pin: Pin, install: str, reviews: str = "push") -> str:
    ref = _action_ref(pin)
    return f"""\
# coderefine review for pull requests (written by `coderefine init`). Safe for pull requests from forks:
# it runs on pull_request, never pull_request_target; a fork's run has no API key, so the signals are
# reported and the model step is skipped, and no review is published from a fork.
# When: {REVIEWS[reviews]} (`coderefine init --reviews push|opened|request`).
name: coderefine review

on:
  pull_request:
    types: {REVIEW_TYPES[reviews]}

permissions:
  contents: read

concurrency:
  group: coderefine-${{{{ github.event.pull_request.number }}}}
  cancel-in-progress: true

jobs:
  review:
    if: github.event.pull_request.draft == false
    runs-on: ubuntu-24.04
    timeout-minutes: 20
    permissions:
      contents: read
      pull-requests: write    # inline comments and the summary comment (same-repository PRs only)
      security-events: write  # SARIF upload to code scanning
    steps:
      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2
        with:
          ref: ${{{{ github.event.pull_request.head.sha }}}}  # the PR head, not the merge commit: lines match
          fetch-depth: 0                                  # the merge base must be there
          persist-credentials: false

      - uses: actions/setup-python@a26af69be951a213d495a4c3e4e4022e16d87065 # v5
        with:
          python-version: "3.11"

      - name: Install the project, so that its tests can run
        run: {install}

{pin.comment("      ", action=True)}      - uses: {ACTION}@{ref}
        env:
          ANTHROPIC_API_KEY: ${{{{ secrets.ANTHROPIC_API_KEY }}}}
        with:
          fail-on: error
          sarif: coderefine.sarif
          upload-sarif: true
"""


def _newline(data: bytes) -> bytes:
    return b"\r\n" if b"\r\n" in data else b"\n"


def _appended(before: bytes, text: str) -> bytes:
    """``before`` unchanged, then ``text`` after a blank line, in the file's own line endings."""
    newline = _newline(before)
    lead = b"" if not before else (newline if before.endswith(b"\n") else newline * 2)
    return before + lead + text.replace("\n", newline.decode()).encode("utf-8")


def _plan_pyproject(root: Path, layout: Layout, version: str) -> PlannedFile | tuple[str, str]:
    path = root / PYPROJECT
    if not path.is_file():
        return PYPROJECT, (
            "there is none; coderefine's defaults apply (creating one could change how pip builds "
            "the project: add a [tool.coderefine] table yourself to change a setting)"
        )
    before = path.read_bytes()
    try:
        data = tomllib.loads(before.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{PYPROJECT} is not valid TOML ({exc}); fix it, then run init again") from exc
    tool = data.get("tool", {})
    if isinstance(tool, dict) and "coderefine" in tool:
        return PYPROJECT, "it already has a [tool.coderefine] table"
    text = coderefine_table(layout, version, Settings())
    after = _appended(before, text)
    check_settings(after)
    return PlannedFile(PYPROJECT, "append", before, after, text)


def check_settings(pyproject: bytes) -> Settings:
    """The settings of a planned pyproject.toml: init writes only real keys with valid values."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / PYPROJECT).write_bytes(pyproject)
        return load_settings(Path(folder), {})


_REPOS = re.compile(rb"^repos:[ \t]*(#.*)?\r?$", re.MULTILINE)
_TOP_KEY = re.compile(rb"^[^\s#-][^:]*:", re.MULTILINE)
_ITEM = re.compile(rb"^([ \t]*)- ", re.MULTILINE)


def _plan_pre_commit(root: Path, pin: Pin) -> PlannedFile | tuple[str, str]:
    path = root / PRE_COMMIT
    if not path.is_file():
        text = (
            "# pre-commit (https://pre-commit.com): run `pre-commit install` once; every commit then runs\n"
            "# these hooks on the staged files.\nrepos:\n" + pre_commit_entry(pin, "  ")
        )
        return PlannedFile(PRE_COMMIT, "create", None, text.encode("utf-8"), text)
    before = path.read_bytes()
    if b"coderefine/coderefine" in before or b"id: coderefine" in before:
        return PRE_COMMIT, "it already has a coderefine hook"
    repos = _REPOS.search(before)
    if repos is None:
        return PRE_COMMIT, (
            "its repos: list is not a block list this can append to; add this entry yourself:\n"
            + pre_commit_entry(pin, "  ")
        )
    # The repos block runs to the next top-level key (or the end); the entry goes after its last line,
    # and every byte of the file keeps its place around it.
    following = _TOP_KEY.search(before, repos.end())
    end = following.start() if following else len(before)
    block_end = len(before[:end].rstrip(b" \t\r\n"))
    item = _ITEM.search(before, repos.end(), end)
    indent = item.group(1).decode() if item else "  "
    entry = pre_commit_entry(pin, indent)
    newline = _newline(before)
    body = entry.replace("\n", newline.decode()).encode("utf-8").removesuffix(newline)
    rest = before[block_end:]
    after = before[:block_end] + newline + body + (rest or newline)
    return PlannedFile(PRE_COMMIT, "append", before, after, entry)


def _plan_workflow(
    root: Path, pin: Pin, layout: Layout, reviews: str = "push"
) -> PlannedFile | tuple[str, str]:
    folder = root / ".github" / "workflows"
    path = root / WORKFLOW
    if path.exists():
        return WORKFLOW, "it exists"
    if reviews == "request":
        return (
            WORKFLOW,
            "reviews on request only (--reviews request): the comment workflow reviews when asked",
        )
    if folder.is_dir():
        for other in sorted(folder.glob("*.y*ml")):
            data = other.read_bytes()
            if f"{ACTION}@".encode() in data and not COMMAND_STEP.search(data):
                return WORKFLOW, f".github/workflows/{other.name} already uses the coderefine action"
    text = workflow(pin, layout.install, reviews)
    return PlannedFile(WORKFLOW, "create", None, text.encode("utf-8"), text)


def _plan_commands(root: Path, pin: Pin, layout: Layout) -> PlannedFile | tuple[str, str]:
    folder = root / ".github" / "workflows"
    if (root / COMMANDS_WORKFLOW).exists():
        return COMMANDS_WORKFLOW, "it exists"
    if folder.is_dir():
        for other in sorted(folder.glob("*.y*ml")):
            if COMMAND_STEP.search(other.read_bytes()):
                return (
                    COMMANDS_WORKFLOW,
                    f".github/workflows/{other.name} already answers /coderefine commands",
                )
    text = commands_workflow(ACTION, _action_ref(pin), layout.install)
    return PlannedFile(COMMANDS_WORKFLOW, "create", None, text.encode("utf-8"), text)


def plan_init(root: Path, layout: Layout, version: str, pin: Pin, reviews: str = "push") -> InitPlan:
    """The files to write; ``reviews`` (a key of REVIEWS) is when the pull request workflow reviews."""
    if reviews not in REVIEWS:
        raise UsageError(f"--reviews must be one of {', '.join(REVIEWS)}, not {reviews!r}")
    files: list[PlannedFile] = []
    skipped: list[tuple[str, str]] = []
    for planned in (
        _plan_pyproject(root, layout, version),
        _plan_pre_commit(root, pin),
        _plan_workflow(root, pin, layout, reviews),
        _plan_commands(root, pin, layout),
    ):
        if isinstance(planned, PlannedFile):
            files.append(planned)
        else:
            skipped.append(planned)
    notes = []
    if pin.source:
        notes.append(
            f"no coderefine release is pinned: you run it from the clone at {pin.source}, so the hook pins "
            f"that clone at commit {pin.rev}"
            + (" (its uncommitted changes are not in that commit: commit them first)" if pin.dirty else "")
            + "; the workflow's action needs that commit on GitHub. Once a release is published, pin its "
            "tag (docs/releasing.md)"
        )
    config = root / PRE_COMMIT
    if config.is_file() and re.search(rb"^ci:", config.read_bytes(), re.MULTILINE):
        notes.append(
            "pre-commit.ci (the ci: section) runs hooks without secrets, so the coderefine hook would fail "
            "there: add it to ci: skip: [coderefine]"
        )
    return InitPlan(tuple(files), tuple(skipped), tuple(notes))


def apply_plan(root: Path, plan: InitPlan) -> tuple[str, ...]:
    """Write every planned file; refuses (before writing any) if one changed since it was planned."""
    for planned in plan.files:
        path = root / planned.path
        now = path.read_bytes() if path.exists() else None
        if now != planned.before:
            raise UsageError(f"{planned.path} changed while coderefine init was asking; run it again")
    written = []
    for planned in plan.files:
        path = root / planned.path
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, planned.after)
        written.append(planned.path)
    return tuple(written)
