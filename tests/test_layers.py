"""The folders are the architecture: each package is one layer, and imports run one way, down the layers.

The walk reads every module of the package with ``ast`` (no import of the code), takes every import it
finds — at module level, inside functions, under ``TYPE_CHECKING`` — and fails on an import of a layer above
the importer's, or on a circle of imports. docs/architecture.md draws the same layers.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.paths import REPO_ROOT

# Bottom to top. A module may import its own layer and the layers before it, never one after it.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "base",
        (
            "coderefine.errors",
            "coderefine.config",
            "coderefine.version",
            "coderefine.timings",
            "coderefine.pyast",
        ),
    ),
    ("project", ("coderefine.project",)),
    ("signals", ("coderefine.signals",)),
    ("edits", ("coderefine.edits",)),
    ("models", ("coderefine.models",)),
    ("refiner", ("coderefine.refiner",)),
    ("report", ("coderefine.report",)),
    ("doors", ("coderefine.doors", "coderefine.api")),
    ("bench", ("coderefine.bench",)),
    ("cli", ("coderefine.cli", "coderefine.__main__")),
    ("package", ("coderefine",)),
)


@dataclass(frozen=True)
class Violation:
    importer: str
    imported: str
    line: int

    def __str__(self) -> str:
        return f"{self.importer}:{self.line} imports {self.imported} from a layer above it"


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def package_modules(root: Path, package: str) -> dict[str, Path]:
    return {module_name(root, path): path for path in sorted((root / package).rglob("*.py"))}


def imports_of(name: str, path: Path, modules: Mapping[str, Path]) -> Iterator[tuple[str, int]]:
    """Each module of the package that ``path`` imports, with the line of the import. ``from pkg import x``
    names the submodule ``pkg.x`` when there is one, else the package ``pkg``."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join([*base, node.module] if node.module else base)
            else:
                source = node.module or ""
            if source not in modules:
                continue
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                yield (submodule if submodule in modules else source), node.lineno


def layer_of(module: str, layers: Sequence[tuple[str, tuple[str, ...]]]) -> int:
    """The index of the layer with the longest prefix that names ``module``."""
    best: tuple[int, int] | None = None
    for index, (_, prefixes) in enumerate(layers):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and (
                best is None or len(prefix) > best[1]
            ):
                best = (index, len(prefix))
    if best is None:
        raise AssertionError(f"{module} belongs to no layer: add it to LAYERS and to docs/architecture.md")
    return best[0]


def import_graph(root: Path, package: str) -> dict[str, dict[str, int]]:
    modules = package_modules(root, package)
    graph: dict[str, dict[str, int]] = {}
    for name, path in modules.items():
        graph[name] = {}
        for imported, line in imports_of(name, path, modules):
            if imported != name:
                graph[name].setdefault(imported, line)
    return graph


def upward_imports(
    graph: Mapping[str, Mapping[str, int]], layers: Sequence[tuple[str, tuple[str, ...]]]
) -> list[Violation]:
    return [
        Violation(importer, imported, line)
        for importer, edges in sorted(graph.items())
        for imported, line in sorted(edges.items())
        if layer_of(imported, layers) > layer_of(importer, layers)
    ]


def import_circles(graph: Mapping[str, Mapping[str, int]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            advanced = False
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, {})))))
                    advanced = True
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    circles.append(sorted(group))
    return circles


def test_no_module_imports_a_layer_above_it() -> None:
    violations = upward_imports(import_graph(REPO_ROOT, "coderefine"), LAYERS)
    assert not violations, "\n".join(map(str, violations))


def test_the_package_has_no_import_circles() -> None:
    circles = import_circles(import_graph(REPO_ROOT, "coderefine"))
    assert not circles, circles


def test_the_top_level_holds_few_modules_beside_the_layer_packages() -> None:
    top = sorted(path.name for path in (REPO_ROOT / "coderefine").glob("*.py"))
    assert len(top) <= 8, top


def architecture_tree(page: str) -> list[str]:
    """The file paths of the folder tree in docs/architecture.md: two spaces a level, folders end in '/'."""
    block = page.split("## Layers as built", 1)[1].split("```", 2)[1]
    folders: list[str] = []
    paths = []
    for line in block.strip("\n").splitlines():
        depth = (len(line) - len(line.lstrip(" "))) // 2
        name = line.split()[0]
        del folders[depth:]
        if name.endswith("/"):
            folders.append(name.rstrip("/"))
        else:
            paths.append("/".join([*folders, name]))
    return paths


def test_every_module_is_named_once_in_the_architecture_page() -> None:
    listed = architecture_tree((REPO_ROOT / "docs" / "architecture.md").read_text(encoding="utf-8"))
    actual = {
        path.relative_to(REPO_ROOT).as_posix()
        for path in (REPO_ROOT / "coderefine").rglob("*.py")
        if path.name != "__init__.py" or path.parent.name == "coderefine"
    }
    repeated = sorted({path for path in listed if listed.count(path) > 1})
    assert not repeated, f"listed more than once in docs/architecture.md: {repeated}"
    assert sorted(actual - set(listed)) == [], "missing from the tree in docs/architecture.md"
    assert sorted(set(listed) - actual) == [], "in docs/architecture.md's tree but not in the package"


def write_tree(root: Path, files: Mapping[str, str]) -> None:
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


PLANTED_LAYERS = (("low", ("app.low",)), ("high", ("app.high",)), ("package", ("app",)))


def test_a_planted_upward_import_is_found_even_inside_a_function(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/low/__init__.py": "",
            "app/low/store.py": "def load():\n    from app.high import door\n\n    return door\n",
            "app/high/__init__.py": "",
            "app/high/door.py": "from app.low.store import load\n",
        },
    )
    graph = import_graph(tmp_path, "app")
    assert [str(v) for v in upward_imports(graph, PLANTED_LAYERS)] == [
        "app.low.store:2 imports app.high.door from a layer above it"
    ]
    assert import_circles(graph) == [["app.high.door", "app.low.store"]]


def test_relative_imports_and_type_checking_imports_count(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "app/__init__.py": "",
            "app/low/__init__.py": "",
            "app/low/a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..high.b import B\n",
            "app/low/c.py": "from . import a\n",
            "app/high/__init__.py": "",
            "app/high/b.py": "class B: ...\n",
        },
    )
    graph = import_graph(tmp_path, "app")
    assert graph["app.low.c"] == {"app.low.a": 1}
    assert [v.imported for v in upward_imports(graph, PLANTED_LAYERS)] == ["app.high.b"]


def test_a_module_outside_every_layer_is_named() -> None:
    try:
        layer_of("elsewhere.mod", PLANTED_LAYERS)
    except AssertionError as error:
        assert "elsewhere.mod belongs to no layer" in str(error)
    else:
        raise AssertionError("no error for a module outside the layers")
