"""A library's own pytest configuration, as the bench's runs of its suite read it: whether it has one (else
the tree is pinned as its own root), and the options of its ``addopts`` that choose which tests run.

The runs drop the project's ``addopts`` (``-o addopts=``): coverage, colours, xdist and reporters need
plugins a suite's venv lacks and change nothing that is scored. But some of them are the selection the
project's maintainers run: click's ``-m 'not stress'`` keeps 31,000 stress tests out, and dropped, they
made the suite time out. Those are passed again.
"""

from __future__ import annotations

import configparser
import shlex
import tomllib
from pathlib import Path

# In the order pytest looks for them (pytest 9 reads pytest.toml first; any such file is a configuration).
_PYTEST_SECTIONS = {
    "pytest.toml": "",
    ".pytest.toml": "",
    "pytest.ini": "",
    ".pytest.ini": "",
    "pyproject.toml": "[tool.pytest.ini_options]",
    "tox.ini": "[pytest]",
    "setup.cfg": "[tool:pytest]",
}


def pin_pytest_root(tree: Path) -> None:
    """Make ``tree`` its own pytest root: without a pytest configuration of its own, pytest would take the
    first one in a folder above (a suite built inside another project would get that project's settings,
    and test ids relative to it). An empty ``[pytest]`` section is pytest's defaults."""
    for name, section in _PYTEST_SECTIONS.items():
        config = tree / name
        if not config.is_file():
            continue
        text = config.read_text("utf-8", errors="replace")
        if section in text or (name == "pyproject.toml" and _has_pytest_table(text)):
            return
    (tree / "pytest.ini").write_text("[pytest]\n", "utf-8")


def _has_pytest_table(pyproject: str) -> bool:
    """Whether a pyproject.toml configures pytest in any spelling TOML allows: ``[tool.pytest]`` (pytest
    9's own table), dotted keys (``pytest.ini_options.testpaths = ...`` under ``[tool]``). A pytest.ini
    written beside it would win, and the project's own settings (its pythonpath) would be lost."""
    try:
        data = tomllib.loads(pyproject)
    except tomllib.TOMLDecodeError:
        return False
    tool = data.get("tool")
    return isinstance(tool, dict) and isinstance(tool.get("pytest"), dict)


# Options of addopts that choose tests or how they are imported: kept. Each takes a value.
_SELECTING = frozenset({"-m", "--ignore", "--ignore-glob", "--deselect", "--import-mode"})


def selection_addopts(tree: Path) -> list[str]:
    """The options of the project's ``addopts`` that choose which tests run or how they are imported
    (``-m``, ``--ignore``, ``--ignore-glob``, ``--deselect``, ``--import-mode``, ``-p no:NAME``), each as
    one ``--opt=value`` argument; [] when it has none or its configuration cannot be read."""
    kept: list[str] = []
    args = _addopts(tree)
    i = 0
    while i < len(args):
        arg = args[i]
        name, equals, value = arg.partition("=")
        if arg.startswith("-p"):
            plugin = arg[2:] or (args[i + 1] if i + 1 < len(args) else "")
            i += 1 if arg[2:] else 2
            if plugin.startswith("no:"):
                kept.append(f"-p{plugin}")
            continue
        if arg.startswith("-m") and arg != "-m" and not arg.startswith("--"):
            name, equals, value = "-m", "=", arg[2:]
        if name in _SELECTING:
            if not equals:
                value = args[i + 1] if i + 1 < len(args) else ""
                i += 1
            if value:
                kept.append(f"{name}={value}" if name.startswith("--") else f"{name}{value}")
        i += 1
    return kept


def _addopts(tree: Path) -> list[str]:
    """The project's ``addopts`` as arguments, from the file pytest would read first at ``tree``."""
    for name, section in _PYTEST_SECTIONS.items():
        config = tree / name
        if not config.is_file():
            continue
        text = config.read_text("utf-8", errors="replace")
        if name.endswith("pytest.toml"):
            return _toml_addopts(text, ("pytest",))
        if name == "pyproject.toml":
            if section not in text and not _has_pytest_table(text):
                continue
            return _toml_addopts(text, ("tool", "pytest"))
        if section and section not in text:
            continue
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(text)
        except configparser.Error:
            return []
        key = section.strip("[]") if section else "pytest"
        raw = parser.get(key, "addopts", fallback="")
        return _split(raw)
    return []


def _toml_addopts(text: str, keys: tuple[str, ...]) -> list[str]:
    """``addopts`` of the TOML table at ``keys`` (or of its ``ini_options``), as arguments."""
    try:
        table: object = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return []
    for key in keys:
        table = table.get(key, {}) if isinstance(table, dict) else {}
    options = table.get("ini_options", table) if isinstance(table, dict) else {}
    raw = options.get("addopts", "") if isinstance(options, dict) else ""
    if isinstance(raw, list):
        return [str(item) for item in raw]
    return _split(str(raw))


def _split(raw: str) -> list[str]:
    try:
        return shlex.split(raw)
    except ValueError:  # an unclosed quote: pytest would refuse it too
        return []
