"""The source of a test as pytest runs it: the test function with its parametrize cases, the fixtures it
asks for (from its class, its file and the conftest files on its way up), and the helpers it calls from
its file, those conftest files and the test modules it imports from.

When the tests are the only specification (a function whose body is gone, a release whose behaviour the
new tests pin), a request that names the failing tests without their source asks the model to guess
what they check. Each piece is cut into units that a budget may drop from the end without ever cutting
a statement in half: the statements of a body, the cases of a parametrize list, the items of a table.
"""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from coderefine.pyast import parse_module
from coderefine.signals.test_piece import Piece, piece_of

FIXTURE_DECORATORS = frozenset({"fixture", "yield_fixture"})
MAX_DEPTH = 3  # helpers of helpers of ...: a test's own support code, not the whole test package
MAX_PIECES_PER_TEST = 8
SET_UP = frozenset({"setUp", "setUpClass", "setup_method", "setup_class", "setup"})


@dataclass(frozen=True)
class Found:
    """A piece and where it was found: its node, file and parse, to follow what it uses in turn."""

    piece: Piece
    node: ast.AST
    path: str
    tree: ast.Module
    text: str


def function_of(nodeid: str) -> tuple[str, tuple[str, ...]]:
    """``path::Class::test[case]`` as its file and the qualified name of its function."""
    path, *names = nodeid.partition("[")[0].split("::")
    return path, tuple(n for n in names if n)


def is_test_support(path: str) -> bool:
    """Whether ``path`` is test code (a test module, a conftest, a file of a test folder): the only
    files whose helpers are shown. The library's own modules are code, not specification."""
    parts = path.replace("\\", "/").split("/")
    name = parts[-1]
    return (
        name == "conftest.py"
        or name.startswith("test_")
        or name.endswith("_test.py")
        or any(p in ("test", "tests", "testing") for p in parts[:-1])
    )


class TestSources:
    """Reads and parses the project's test files (through ``read``: a relative path to its text, or
    None) once each, and gives the pieces of a failing test."""

    __test__ = False  # pytest must not collect this class of the package's own namesake

    def __init__(self, read: Callable[[str], str | None], exclude: Iterable[str] = ()) -> None:
        self._read = read
        self._exclude = frozenset(exclude)
        self._parsed: dict[str, tuple[str, ast.Module] | None] = {}
        # A round builds the spec for its focus, its critic and its reviser: each test is resolved once.
        self._pieces: dict[tuple[str, tuple[str, ...]], list[Piece]] = {}

    def module(self, path: str) -> tuple[str, ast.Module] | None:
        if path not in self._parsed:
            text = self._read(path) if path not in self._exclude else None
            try:
                self._parsed[path] = (text, parse_module(text)) if text is not None else None
            except (SyntaxError, ValueError):
                self._parsed[path] = None
        return self._parsed[path]

    def pieces(self, nodeid: str) -> list[Piece]:
        """The test of ``nodeid`` first, then the fixtures and helpers it reaches (each once), or []
        when its file or function cannot be found."""
        key = function_of(nodeid)
        if key not in self._pieces:
            self._pieces[key] = self._resolve(*key)
        return list(self._pieces[key])

    def _resolve(self, path: str, names: tuple[str, ...]) -> list[Piece]:
        found = self.module(path)
        if found is None or not names:
            return []
        text, tree = found
        scope: list[ast.ClassDef] = []
        body: Sequence[ast.stmt] = tree.body
        for name in names[:-1]:
            cls = next((n for n in body if isinstance(n, ast.ClassDef) and n.name == name), None)
            if cls is None:
                return []
            scope.append(cls)
            body = cls.body
        classes = _with_bases(tree, scope[-1]) if scope else []
        owner: ast.ClassDef | None = None
        func = next((n for n in _functions(body) if n.name == names[-1]), None)
        for cls in classes[1:] if func is None else ():
            func = next((n for n in _functions(cls.body) if n.name == names[-1]), None)
            if func is not None:
                owner = cls
                break
        if func is None:
            return []
        name = "::".join(names) + (f" (inherited from {owner.name})" if owner is not None else "")
        test = piece_of(path, name, "test", func, text)
        found_pieces: dict[tuple[str, str], Piece] = {}
        # A unittest class's set-up says what ``self.x`` is; the test's own text does not.
        for cls in classes:
            for method in _functions(cls.body):
                if method.name in SET_UP:
                    piece = piece_of(path, f"{cls.name}::{method.name}", "fixture", method, text)
                    self._add(Found(piece, method, path, tree, text), found_pieces, 0)
        self._follow(path, tree, text, [*scope[:-1], *reversed(classes)], func, found_pieces, depth=0)
        return [test, *list(found_pieces.values())[: MAX_PIECES_PER_TEST - 1]]

    def _follow(
        self,
        path: str,
        tree: ast.Module,
        text: str,
        scope: Sequence[ast.ClassDef],
        node: ast.AST,
        found: dict[tuple[str, str], Piece],
        depth: int,
    ) -> None:
        if depth >= MAX_DEPTH:
            return
        fixtures = _fixture_names(node) if _is_function(node) else set()
        for name in sorted(fixtures):
            hit = self._fixture(path, tree, text, scope, name, requester=node)
            if hit is not None:
                self._add(hit, found, depth)
        used = _names_used(node) - fixtures
        for name in sorted(used):
            helper = self._helper(path, tree, text, scope, name)
            if helper is not None:
                self._add(helper, found, depth)

    def _add(self, hit: Found, found: dict[tuple[str, str], Piece], depth: int) -> None:
        key = (hit.piece.path, hit.piece.name)
        if key in found or len(found) >= MAX_PIECES_PER_TEST:
            return
        found[key] = hit.piece
        self._follow(hit.path, hit.tree, hit.text, (), hit.node, found, depth + 1)

    def _fixture(
        self,
        path: str,
        tree: ast.Module,
        text: str,
        scope: Sequence[ast.ClassDef],
        name: str,
        requester: ast.AST | None = None,
    ) -> Found | None:
        """The definition pytest gives for fixture ``name``: the class's, the file's, then the conftest
        files' outwards. A fixture that asks for its own name (``def db(db)``) extends the next one out."""
        for cls in reversed(scope):
            for node in _functions(cls.body):
                if _fixture_name(node) == name and node is not requester:
                    return Found(
                        piece_of(path, f"{cls.name}::{node.name}", "fixture", node, text),
                        node,
                        path,
                        tree,
                        text,
                    )
        for where in (path, *conftests(path)):
            found = self.module(where) if where != path else (text, tree)
            if found is None:
                continue
            for node in _functions(found[1].body):
                if _fixture_name(node) == name and node is not requester:
                    return Found(
                        piece_of(where, node.name, "fixture", node, found[0]), node, where, found[1], found[0]
                    )
        return None

    def _helper(
        self, path: str, tree: ast.Module, text: str, scope: Sequence[ast.ClassDef], name: str
    ) -> Found | None:
        for cls in reversed(scope):
            for method in _functions(cls.body):
                if method.name == name and _fixture_name(method) is None:
                    piece = piece_of(path, f"{cls.name}::{name}", "helper", method, text)
                    return Found(piece, method, path, tree, text)
        for where in (path, *conftests(path)):
            found = self.module(where) if where != path else (text, tree)
            if found is None:
                continue
            node = _top_level(found[1], name)
            if node is not None:
                return Found(piece_of(where, name, "helper", node, found[0]), node, where, found[1], found[0])
            for candidate in _imported_from(found[1], name, where):
                imported = self.module(candidate) if is_test_support(candidate) else None
                target = _top_level(imported[1], name) if imported else None
                if imported is not None and target is not None:
                    piece = piece_of(candidate, name, "helper", target, imported[0])
                    return Found(piece, target, candidate, imported[1], imported[0])
        return None


def conftests(path: str) -> list[str]:
    """The conftest files pytest loads for a test at ``path``, nearest first."""
    folders: list[str] = []
    folder = posixpath.dirname(path)
    while True:
        folders.append(folder)
        if not folder:
            break
        folder = posixpath.dirname(folder)
    return [posixpath.join(f, "conftest.py") if f else "conftest.py" for f in folders]


def _is_function(node: ast.AST) -> bool:
    return isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)


def _functions(body: Iterable[ast.stmt]) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [n for n in body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]


def _decorator_name(decorator: ast.expr) -> str:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    if isinstance(target, ast.Attribute):
        return target.attr
    return target.id if isinstance(target, ast.Name) else ""


def _fixture_name(node: ast.AST) -> str | None:
    """The name a fixture definition is asked for by (``name=`` or the function's), or None."""
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return None
    for decorator in node.decorator_list:
        if _decorator_name(decorator) in FIXTURE_DECORATORS:
            if isinstance(decorator, ast.Call):
                for keyword in decorator.keywords:
                    if keyword.arg == "name" and isinstance(keyword.value, ast.Constant):
                        return str(keyword.value.value)
            return node.name
    return None


def _parametrized(func: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The parameters a ``parametrize`` gives values to directly (``indirect`` ones go to a fixture,
    which is then shown)."""
    names: set[str] = set()
    for decorator in func.decorator_list:
        if isinstance(decorator, ast.Call) and _decorator_name(decorator) == "parametrize" and decorator.args:
            first = decorator.args[0]
            given: set[str] = set()
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                given = {n.strip() for n in first.value.split(",")}
            elif isinstance(first, ast.List | ast.Tuple):
                given = {str(e.value) for e in first.elts if isinstance(e, ast.Constant)}
            indirect = next((k.value for k in decorator.keywords if k.arg == "indirect"), None)
            if isinstance(indirect, ast.Constant) and indirect.value is True:
                given = set()
            elif isinstance(indirect, ast.List | ast.Tuple):
                given -= {str(e.value) for e in indirect.elts if isinstance(e, ast.Constant)}
            names |= given
    return names


def _with_bases(tree: ast.Module, cls: ast.ClassDef) -> list[ast.ClassDef]:
    """``cls`` and the classes of the same file it inherits from (a test method may be defined in a
    base class), nearest first."""
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    order, queue = [cls], [cls]
    while queue:
        for base in queue.pop(0).bases:
            found = classes.get(base.id) if isinstance(base, ast.Name) else None
            if found is not None and found not in order:
                order.append(found)
                queue.append(found)
    return order


def _fixture_names(node: ast.AST) -> set[str]:
    """The fixtures a test or fixture asks for: its parameters (less ``self`` and parametrized names)
    and the names of ``usefixtures`` marks."""
    assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    args = node.args
    names = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)} - {"self", "cls", "request"}
    names -= _parametrized(node)
    for decorator in node.decorator_list:
        if isinstance(decorator, ast.Call) and _decorator_name(decorator) == "usefixtures":
            names.update(str(a.value) for a in decorator.args if isinstance(a, ast.Constant))
    return names


def _names_used(node: ast.AST) -> set[str]:
    """Every name ``node`` loads, the attributes of ``self`` included (a test class's helpers)."""
    names: set[str] = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load):
            names.add(child.id)
        elif (
            isinstance(child, ast.Attribute)
            and isinstance(child.value, ast.Name)
            and child.value.id in ("self", "cls")
        ):
            names.add(child.attr)
    return names


def _top_level(tree: ast.Module, name: str) -> ast.stmt | None:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name == name:
            return None if _fixture_name(node) is not None else node
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            return node
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
            return node
    return None


def _imported_from(tree: ast.Module, name: str, path: str) -> list[str]:
    """The project files a ``from MODULE import name`` of ``tree`` may read ``name`` from: relative to
    the importing file's folder, then to the project's root."""
    folder = posixpath.dirname(path)
    for node in tree.body:
        if not isinstance(node, ast.ImportFrom) or not any((a.asname or a.name) == name for a in node.names):
            continue
        parts = (node.module or "").split(".") if node.module else []
        if node.level:
            base = folder
            for _ in range(node.level - 1):
                base = posixpath.dirname(base)
            return [posixpath.join(base, *parts) + ".py"] if parts else []
        relative = posixpath.join(*parts) + ".py" if parts else ""
        return [posixpath.join(folder, relative), relative] if relative else []
    return []
