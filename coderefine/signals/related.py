"""Which test files a change can break: chosen from file names and import lines, never by importing code.

A test is related to a changed module when it is named after it, imports it, or imports a package whose
``__init__.py`` re-exports it (``from ._scan import scan`` in ``altsvc/__init__.py`` makes every test that
does ``import altsvc`` or ``from altsvc import scan`` related to ``altsvc/_scan.py``), at any depth of
packages. Imports are followed through the project's other modules too (a test of ``idcheck`` reaches
``_time`` when ``idcheck/__init__.py`` imports ``_uuid`` and ``_uuid`` imports ``_time``), up to
``MODULE_HOPS`` modules away; hops through package ``__init__.py`` files are not counted. Imports inside
functions count: the scan reads every import line, indented or not. Each test found keeps the chain that
found it (``TestSelection.reasons``), for ``check --explain`` and ``check --format json``.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal

_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]+)", re.M)
_PLAIN = re.compile(r"^[ \t]*import[ \t]+([^\n#]+)", re.M)
# A selection that finds nothing runs the whole suite when it has at most this many test files.
SMALL_SUITE = 20
# How many ordinary modules an import chain may pass through from a test to the changed module: enough
# for a package's private helpers, while a core module imported everywhere does not relate every test.
MODULE_HOPS = 3

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


def is_python(path: str) -> bool:
    return _name(path).endswith(".py")


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
    """The imports of every Python file (path -> modules), from their texts; ``import_index.ImportIndex``
    gives the same without reading unchanged files again."""
    return {p: imported_modules(read.get(p, ""), package_of(p)) for p in project_files if is_python(p)}


def _chain(names: Sequence[str]) -> str:
    """``("a", "a._b", "a._c")`` -> "imports a, which imports a._b, which imports a._c"."""
    return "imports " + ", which imports ".join(names)


class TestIndex:
    """The project's tests indexed for selection, built once and asked for many changes (a sweep's files):
    by file name; by every module an import names or lies within (``a.b.c`` -> ``a``, ``a.b``, ``a.b.c``);
    by the exact names imported; and who imports what among the other modules (package ``__init__.py``
    files and ordinary modules). Built, it answers a change in time that grows with the change, not the
    project (0.2 s a file in a 20,000-file tree)."""

    def __init__(self, project_files: Sequence[str], imports: Mapping[str, set[str]]) -> None:
        self.imports = imports
        self.tests = [p for p in project_files if is_test_file(p)]
        self.test_set = frozenset(self.tests)
        self.suite = sorted(self.test_set)
        self.packages = {module_name(p) for p in project_files if is_package_init(p)}
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
                for prefix in _prefixes(name):
                    self.by_prefix.setdefault(prefix, set()).add(test)
        # importer of every module an import of a non-test module names or lies within
        self.importers: dict[str, set[str]] = {}
        for path in project_files:
            if is_test_file(path) or not is_python(path) or _name(path) == "conftest.py":
                continue
            importer = module_name(path)
            for name in imports.get(path, set()):
                for prefix in _prefixes(name):
                    if prefix != importer:
                        self.importers.setdefault(prefix, set()).add(importer)

    def related(self, changed: Sequence[str]) -> list[str]:
        """Test files related to ``changed`` (see ``related_tests``)."""
        return sorted(self.reasons(changed))

    def reasons(self, changed: Sequence[str]) -> dict[str, str]:
        """Each test file related to ``changed``, with how it was found (the first way, the shortest
        import chain)."""
        found: dict[str, str] = {p: "changed" for p in changed if is_test_file(p)}
        for path in changed:
            if is_test_file(path):
                continue
            stem = PurePosixPath(path).stem
            if stem == "conftest":
                folder = PurePosixPath(path).parent
                for test in self.tests:
                    if PurePosixPath(test).is_relative_to(folder):
                        found.setdefault(test, f"under the folder of {path}")
                continue
            for name in (f"test_{stem}.py", f"{stem}_test.py"):
                for test in self.by_name.get(name, ()):
                    found.setdefault(test, f"named after {path}")
            module = module_name(path)
            if not module:
                continue
            for importer, chain in self._chains(module):
                # A package that re-exports the module is used through its own name only: a test
                # importing a sibling module of that package does not reach the changed one.
                tests = self.by_exact if importer in self.packages and importer != module else self.by_prefix
                for test in sorted(tests.get(importer, ())):
                    found.setdefault(test, _chain(chain))
        return found

    def _chains(self, module: str) -> list[tuple[str, tuple[str, ...]]]:
        """``module`` and every module that imports it, directly or through others, nearest first, each
        with its import chain down to ``module``; at most ``MODULE_HOPS`` ordinary modules on the way."""
        best: dict[str, int] = {module: 0}
        chains: dict[str, tuple[str, ...]] = {module: (module,)}
        order: list[str] = []
        queue: deque[str] = deque([module])
        while queue:
            current = queue.popleft()
            if current in order:
                continue
            order.append(current)
            for importer in sorted(self.importers.get(current, ())):
                if current in self.packages and importer.startswith(current + "."):
                    continue  # a package's own modules name it in relative imports, not to use it
                cost = best[current] + (0 if importer in self.packages else 1)
                if cost > MODULE_HOPS or best.get(importer, MODULE_HOPS + 1) <= cost:
                    continue
                best[importer] = cost
                chains[importer] = (importer, *chains[current])
                # a package costs nothing, so it is looked at before the modules already queued
                queue.appendleft(importer) if cost == best[current] else queue.append(importer)
        return [(name, chains[name]) for name in order]


def _prefixes(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:end]) for end in range(1, len(parts) + 1)]


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
    reasons: tuple[tuple[str, str], ...] = ()  # (test file, how it was found) of a related selection

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
    reasons = index.reasons(changed)
    if reasons:
        related = sorted(reasons)
        return TestSelection(tuple(related), "related", len(suite), tuple((t, reasons[t]) for t in related))
    if suite and len(suite) <= small_suite:
        return TestSelection(tuple(suite), "fallback", len(suite))
    return TestSelection((), "none", len(suite))
