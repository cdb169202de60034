"""Shared fixtures: real git repositories in temporary folders, with a fixed identity and no home."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.invalid",
    "GIT_COMMITTER_NAME": "Test Author",
    "GIT_COMMITTER_EMAIL": "author@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-slow", action="store_true", help="also run the tests marked slow (CI runs them)")


def run_slow(config: pytest.Config, environ: Mapping[str, str]) -> bool:
    """Slow tests run under CI (the CI variable set, as CI services do) or with --run-slow."""
    ci = environ.get("CI", "").strip().lower()
    return bool(config.getoption("--run-slow")) or ci not in ("", "0", "false", "no")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if run_slow(config, os.environ):
        return
    skip = pytest.mark.skip(reason="slow (minutes): runs with --run-slow, or when CI is set")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """No test reads the user's git config or writes to their home; no CODEREFINE_* leaks in."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    for key in list(os.environ):
        if key.startswith("CODEREFINE_") or key in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
            monkeypatch.delenv(key)
    yield


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
    return done.stdout


def write_files(root: Path, files: Mapping[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_bytes(content.encode("utf-8"))


RepoFactory = Callable[[Mapping[str, str | bytes]], Path]


@pytest.fixture
def make_repo(tmp_path: Path) -> RepoFactory:
    """A git repository with ``files`` committed on branch main."""

    def make(files: Mapping[str, str | bytes]) -> Path:
        root = tmp_path / "repo"
        root.mkdir()
        git(root, "init", "-q", "-b", "main")
        write_files(root, files)
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "initial")
        return root

    return make


SMALL_PROJECT: dict[str, str | bytes] = {
    "pkg/__init__.py": "",
    "pkg/mod.py": "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n",
    "tests/test_mod.py": (
        "from pkg.mod import add, mul\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\n"
        "def test_mul():\n    assert mul(2, 3) == 6\n"
    ),
    "tests/test_other.py": "def test_other():\n    assert True\n",
}
