"""What `coderefine init` needs to know about a project: its source folders, its tests, how CI installs it.

Read from the files alone (no import, no subprocess), so that it is safe on any checkout.
"""

from __future__ import annotations

import configparser
import tomllib
from dataclasses import dataclass
from pathlib import Path

# Folders that hold no project source: tools' state, builds, environments, documentation.
_NOT_SOURCE = frozenset(
    {"build", "dist", "docs", "doc", "examples", "example", "benchmarks", "scripts", "site", "htmlcov"}
)
_TEST_FOLDERS = ("tests", "test", "testing")
_NOT_MODULES = frozenset(
    {"setup.py", "conftest.py", "noxfile.py", "fabfile.py", "tasks.py", "manage.py", "versioneer.py"}
)
_TEST_EXTRAS = ("test", "tests", "testing", "dev")
_TEST_REQUIREMENTS = (
    "requirements-test.txt",
    "requirements-tests.txt",
    "requirements-dev.txt",
    "test-requirements.txt",
    "dev-requirements.txt",
    "requirements/test.txt",
    "requirements/tests.txt",
    "requirements/dev.txt",
)


@dataclass(frozen=True)
class Layout:
    """A project as `coderefine init` sees it; every path is relative to the root, with '/'."""

    sources: tuple[str, ...]  # package folders and top-level modules
    test_folders: tuple[str, ...]
    test_files: int
    pytest_config: str  # the file that configures pytest, "" for none
    has_pyproject: bool
    install: str  # what a CI job runs so that the project's tests can run

    def describe(self) -> str:
        sources = ", ".join(f"{s}/" if not s.endswith(".py") else s for s in self.sources) or "no sources"
        tests = " in " + ", ".join(f"{t}/" for t in self.test_folders) if self.test_folders else ""
        plural = "" if self.test_files == 1 else "s"
        return f"{self.kind}; {sources}; {self.test_files} test file{plural}{tests}"

    @property
    def kind(self) -> str:
        if any(s.startswith("src/") for s in self.sources):
            return "src/ layout"
        if any(t.startswith(tuple(f"{s}/" for s in self.sources)) for t in self.test_folders):
            return "tests inside the package"
        return "flat layout"


def _skipped(folder: Path) -> bool:
    name = folder.name
    return (
        name.startswith((".", "_"))
        or name in _NOT_SOURCE
        or name.endswith(".egg-info")
        or (folder / "pyvenv.cfg").exists()
        or name in ("venv", "env", "node_modules")
    )


def _is_test_file(path: Path) -> bool:
    return path.suffix == ".py" and (path.name.startswith("test_") or path.stem.endswith("_test"))


def _packages(folder: Path) -> list[Path]:
    found = (p for p in folder.iterdir() if p.is_dir() and not _skipped(p))
    return sorted(p for p in found if (p / "__init__.py").is_file())


def _modules(folder: Path) -> list[Path]:
    return sorted(
        p
        for p in folder.glob("*.py")
        if p.name not in _NOT_MODULES and not _is_test_file(p) and not p.name.startswith("_")
    )


def _count_tests(folder: Path) -> int:
    return sum(
        1
        for path in folder.rglob("*.py")
        if _is_test_file(path) and not any(_skipped(part) for part in path.relative_to(folder).parents)
    )


def _pytest_config(root: Path, pyproject: dict[str, object]) -> str:
    tool = pyproject.get("tool", {})
    if isinstance(tool, dict) and isinstance(tool.get("pytest"), dict):
        return "pyproject.toml"
    if (root / "pytest.ini").is_file():
        return "pytest.ini"
    for name, section in (("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read(root / name, encoding="utf-8")
        except (configparser.Error, UnicodeDecodeError):
            continue
        if parser.has_section(section):
            return name
    return ""


def _install(root: Path, pyproject: dict[str, object]) -> str:
    """The pip command that makes the project's tests runnable in a fresh CI job."""
    setup = ("setup.py", "setup.cfg")
    installable = bool(pyproject.get("project")) or any((root / name).is_file() for name in setup)
    project = pyproject.get("project", {})
    extras = project.get("optional-dependencies", {}) if isinstance(project, dict) else {}
    groups = pyproject.get("dependency-groups", {})
    for name in _TEST_EXTRAS:
        if installable and isinstance(extras, dict) and name in extras:
            return f'python -m pip install -e ".[{name}]"'
    for name in _TEST_EXTRAS:
        if isinstance(groups, dict) and name in groups:
            # Dependency groups (PEP 735): pip 25.1 and later install them.
            return f"python -m pip install {'-e . ' if installable else ''}--group {name}"
    for name in _TEST_REQUIREMENTS:
        if (root / name).is_file():
            return f"python -m pip install {'-e . ' if installable else ''}-r {name}"
    if installable:
        return "python -m pip install -e . pytest"
    if (root / "requirements.txt").is_file():
        return "python -m pip install -r requirements.txt pytest"
    return "python -m pip install pytest"


def read_pyproject(root: Path) -> dict[str, object]:
    """The parsed pyproject.toml, or {} when there is none; invalid TOML is left to the caller's check."""
    try:
        return tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return {}


def detect_layout(root: Path) -> Layout:
    pyproject = read_pyproject(root)
    sources: list[str] = []
    src = root / "src"
    if src.is_dir():
        sources += [f"src/{p.name}" for p in _packages(src)] + [f"src/{p.name}" for p in _modules(src)]
    if not sources:
        top = [p.name for p in _packages(root) if p.name not in _TEST_FOLDERS]
        # Beside packages, top-level modules are the project's tooling (versioneer.py, fabfile.py);
        # without packages, they are the project (a single-module library such as six.py).
        sources += top or [p.name for p in _modules(root)]
    tests = [name for name in _TEST_FOLDERS if (root / name).is_dir()]
    for source in sources:
        tests += [f"{source}/{name}" for name in _TEST_FOLDERS if (root / source / name).is_dir()]
    count = sum(_count_tests(root / folder) for folder in tests)
    if not tests:
        # Test modules beside the code: at the top, or anywhere in the packages.
        count = sum(1 for p in root.glob("*.py") if _is_test_file(p))
        count += sum(_count_tests(root / s) for s in sources if (root / s).is_dir())
    return Layout(
        sources=tuple(sources),
        test_folders=tuple(tests),
        test_files=count,
        pytest_config=_pytest_config(root, pyproject),
        has_pyproject=(root / "pyproject.toml").is_file(),
        install=_install(root, pyproject),
    )
