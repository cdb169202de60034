"""Which test files a change can break: chosen from file names and import lines, never by importing code.

A test is related to a changed module when it is named after it, imports it, or imports a package whose
``__init__.py`` re-exports it (``from ._scan import scan`` in ``altsvc/__init__.py`` makes every test that
does ``import altsvc`` or ``from altsvc import scan`` related to ``altsvc/_scan.py``), at any depth of
packages. Imports inside functions count: the scan reads every import line, indented or not.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal

_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]+)", re.M)
_PLAIN = re.compile(r"^[ \t]*import[ \t]+([^\n#]+)", re.M)
# A selection that finds nothing runs the whole suite when it has at most this many test files.
SMALL_SUITE = 20

Scope = Literal["related", "all", "fallback", "none"]


def _name(path: str) -> str:
    # String work, not PurePosixPath: these run for every file of a 20,000-file tree, where building
    # the path objects took seconds. The paths are git's or a walk's, already normalised.
    return path.rstrip("/").rsplit("/", 1)[-1]


def is_test_file(path: str) -> bool:
    name = _name(path)
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def is_package_init(path: str) -> bool:
    return _name(path) == "__init__.py"


def module_name(path: str) -> str:
    """The dotted module name of a repository path (``src/pkg/mod.py`` -> ``pkg.mod``)."""
    parts = list(PurePosixPath(path).with_suffix("").parts)
    if parts and parts[0] in ("src", "lib") and len(parts) > 1:
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def package_of(path: str) -> str:
    """The dotted name of the package a file sits in (empty at the top)."""
    parts = PurePosixPath(path).parent.parts
    if parts and parts[0] in ("src", "lib"):
        parts = parts[1:]
    return ".".join(parts)


def imported_modules(source: str, package: str = "") -> set[str]:
    """Every module a file may import: ``from a import b`` yields both ``a`` and ``a.b``.

    Relative imports are resolved against ``package``, the dotted name of the file's own package.
    """
    found: set[str] = set()
    for match in _PLAIN.finditer(source):
        found.update(part.split(" as ")[0].strip() for part in match.group(1).split(","))
    for match in _FROM.finditer(source):
        base = _absolute(match.group(1), package)
        if base is None:
            continue
        if base:
            found.add(base)
        for name in re.split(r"[\s,()]+", match.group(2)):
            if name and name not in ("*", "as") and not name.startswith("\\"):
                found.add(f"{base}.{name}" if base else name)
    return {m for m in found if m and m.replace(".", "").replace("_", "").isalnum()}


def _absolute(base: str, package: str) -> str | None:
    """``base`` of a ``from`` import as an absolute name (None when it climbs above the top)."""
    level = len(base) - len(base.lstrip("."))
    if not level:
        return base
    parts = package.split(".") if package else []
    if level - 1 > len(parts):
        return None
    parts = parts[: len(parts) - (level - 1)]
    rest = base[level:]
    return ".".join([*parts, rest] if rest else parts)


def file_imports(project_files: Sequence[str], read: Mapping[str, str]) -> dict[str, set[str]]:
    """The imports of every test file and package ``__init__.py`` (path -> modules), from their texts;
    ``import_index.ImportIndex`` gives the same without reading unchanged files again."""
    return {
        p: imported_modules(read.get(p, ""), package_of(p))
        for p in project_files
        if is_test_file(p) or is_package_init(p)
    }


def _reexporters(modules: set[str], imports: Mapping[str, set[str]]) -> set[str]:
    """``modules`` and every package whose ``__init__.py`` imports one of them, to a fixed point
    (``imports``: package name -> what its ``__init__.py`` imports)."""
    reached = set(modules)
    grew = True
    while grew:
        grew = False
        for package, names in imports.items():
            if package not in reached and any(_within(n, m) for n in names for m in reached):
                reached.add(package)
                grew = True
    return reached


def _within(name: str, module: str) -> bool:
    return name == module or name.startswith(module + ".")


class TestIndex:
    """The project's tests indexed for selection, built once and asked for many changes (a sweep's files):
    by file name; by every module an import names or lies within (``a.b.c`` -> ``a``, ``a.b``, ``a.b.c``);
    by the exact names imported; and the imports of each package ``__init__.py``. Built, it answers a
    change in time that grows with the change, not the project (0.2 s a file in a 20,000-file tree)."""

    def __init__(self, project_files: Sequence[str], imports: Mapping[str, set[str]]) -> None:
        self.imports = imports
        self.tests = [p for p in project_files if is_test_file(p)]
        self.test_set = frozenset(self.tests)
        self.suite = sorted(self.test_set)
        self.package_imports = {
            module_name(p): imports.get(p, set()) for p in project_files if is_package_init(p)
        }
        self.by_name: dict[str, list[str]] = {}
        self.by_prefix: dict[str, set[str]] = {}
        self.by_exact: dict[str, set[str]] = {}
        for test in self.tests:
            self.by_name.setdefault(_name(test), []).append(test)
            for name in imports.get(test, set()):
                self.by_exact.setdefault(name, set()).add(test)
                parts = name.split(".")
                for end in range(1, len(parts) + 1):
                    self.by_prefix.setdefault(".".join(parts[:end]), set()).add(test)

    def related(self, changed: Sequence[str]) -> list[str]:
        """Test files related to ``changed`` (see ``related_tests``)."""
        related: set[str] = {p for p in changed if is_test_file(p)}
        for path in changed:
            if is_test_file(path):
                continue
            stem = PurePosixPath(path).stem
            if stem == "conftest":
                folder = PurePosixPath(path).parent
                related.update(t for t in self.tests if PurePosixPath(t).is_relative_to(folder))
                continue
            for name in (f"test_{stem}.py", f"{stem}_test.py"):
                related.update(self.by_name.get(name, ()))
            module = module_name(path)
            if not module:
                continue
            related.update(self.by_prefix.get(module, ()))
            # A package that re-exports the module is used through its own name only: a test importing a
            # sibling module of that package does not reach the changed one.
            for package in _reexporters({module}, self.package_imports) - {module}:
                related.update(self.by_exact.get(package, ()))
        return sorted(related)


def related_tests(
    changed: Sequence[str],
    project_files: Sequence[str],
    read: Mapping[str, str],
    imports: Mapping[str, set[str]] | None = None,
) -> list[str]:
    """Test files related to ``changed``: the changed tests themselves, by name, and by import.

    ``read`` gives the text of test files and package ``__init__.py`` files (path -> source); files
    missing from it count by name only. ``imports`` (path -> modules, as ``file_imports`` gives them)
    replaces ``read`` when given.
    """
    if imports is None:
        imports = file_imports(project_files, read)
    return TestIndex(project_files, imports).related(changed)


@dataclass(frozen=True)
class TestSelection:
    """The test files a run of pytest gets, and why those."""

    __test__ = False  # not a test class, whatever pytest's name pattern says

    files: tuple[str, ...]
    scope: Scope = "related"
    suite: int = 0  # test files in the project

    def describe(self) -> str:
        """Why these files, for the reports (empty for the usual related selection)."""
        if self.scope == "all":
            return 'the whole suite (tests = "all")'
        if self.scope == "fallback":
            return "no test is related to the change, so the whole suite ran (it is small)"
        if self.scope == "none":
            return (
                f"no tests related to the change (the suite has {self.suite} test files; "
                'set tests = "all" in [tool.coderefine] to run them all)'
            )
        return ""


def select_tests(
    changed: Sequence[str],
    project_files: Sequence[str],
    read: Mapping[str, str],
    *,
    run_all: bool = False,
    small_suite: int = SMALL_SUITE,
    imports: Mapping[str, set[str]] | None = None,
) -> TestSelection:
    """The related tests of ``changed``; the whole suite when asked, or when nothing is related and the
    suite is small (at most ``small_suite`` test files)."""
    index = TestIndex(project_files, imports if imports is not None else file_imports(project_files, read))
    return select_with(index, changed, run_all=run_all, small_suite=small_suite)


def select_with(
    index: TestIndex, changed: Sequence[str], *, run_all: bool = False, small_suite: int = SMALL_SUITE
) -> TestSelection:
    """``select_tests`` with the project's tests already indexed."""
    new_tests = [p for p in changed if is_test_file(p) and p not in index.test_set]
    suite = sorted({*index.suite, *new_tests}) if new_tests else index.suite
    if run_all:
        return TestSelection(tuple(suite), "all", len(suite))
    related = index.related(changed)
    if related:
        return TestSelection(tuple(related), "related", len(suite))
    if suite and len(suite) <= small_suite:
        return TestSelection(tuple(suite), "fallback", len(suite))
    return TestSelection((), "none", len(suite))
