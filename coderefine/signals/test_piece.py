"""A test file's definition as a request shows it: its lines cut into units that a budget may drop from
the end without ever cutting a statement in half (the statements of a body, the cases of a parametrize
list, the items of a table), and the names a test's text uses."""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from coderefine.pyast import parse_module

PieceKind = Literal["test", "fixture", "helper"]
KEEP_CASES = 2  # the first cases of a list are cut last: an example of each shape stays


@dataclass(frozen=True)
class Unit:
    """Lines of a piece that are shown or cut together. ``rank`` orders the cuts: a lower rank goes
    first (cases past the first few, then statements, then the first cases); ``None`` is never cut."""

    text: str
    rank: int | None


@dataclass(frozen=True)
class Piece:
    """One definition of a test file: a test, a fixture or a helper, as units of its own lines."""

    path: str
    name: str
    kind: PieceKind
    start: int
    end: int  # the last line in the file (a cut piece keeps its place)
    units: tuple[Unit, ...]

    @property
    def text(self) -> str:
        return "".join(u.text for u in self.units)


# Methods of the builtin types: ``text.split()`` in a test names str's method, not a ``split`` of the code.
BUILTIN_METHODS = frozenset(
    name
    for kind in (str, bytes, list, dict, set, frozenset, tuple, int, float, object)
    for name in dir(kind)
    if not name.startswith("_")
)


@dataclass(frozen=True)
class NamesUsed:
    """What the tests' text names: plain names, attribute names, and ``base.attr`` pairs."""

    names: frozenset[str]
    attributes: frozenset[str]
    qualified: frozenset[tuple[str, str]]

    def reaches(self, name: str, owner: str | None, modules: Iterable[str]) -> bool:
        """Whether a definition ``name`` (a method of class ``owner``, or top level when None) of the
        code under review, whose module is importable as one of ``modules``, may be what the tests call.
        An attribute named like a builtin type's method counts only on the definition's module or
        class (``inflection.get``, ``Cache.get`` when the tests name ``Cache``), never on any object."""
        if name in self.names:
            return True
        if name not in self.attributes:
            return False
        if name not in BUILTIN_METHODS:
            return True
        bases = {base for base, attr in self.qualified if attr == name}
        if owner is not None:
            return owner in self.names or owner in self.attributes or owner in bases
        return any(module in bases for module in modules)


def names_called(pieces: Iterable[Piece]) -> NamesUsed:
    """The names and attributes the tests' text uses: what of the code under review they may call."""
    names: set[str] = set()
    attributes: set[str] = set()
    qualified: set[tuple[str, str]] = set()
    for piece in pieces:
        try:
            tree = parse_module(textwrap.dedent(piece.text))
        except SyntaxError:
            continue
        for child in ast.walk(tree):
            if isinstance(child, ast.Name):
                names.add(child.id)
            elif isinstance(child, ast.Attribute):
                attributes.add(child.attr)
                # The base's last name: ``pkg.mod.get`` is mod's get, ``m.get`` of ``import pkg.mod as m``
                # names the alias (the import line is not in the test's text).
                if isinstance(child.value, ast.Name):
                    qualified.add((child.value.id, child.attr))
                elif isinstance(child.value, ast.Attribute):
                    qualified.add((child.value.attr, child.attr))
    return NamesUsed(frozenset(names), frozenset(attributes), frozenset(qualified))


def piece_of(path: str, name: str, kind: PieceKind, node: ast.AST, text: str) -> Piece:
    """``node``'s lines (its decorators and comments above them included) as cuttable units."""
    lines = text.splitlines(keepends=True)
    assert isinstance(node, ast.stmt)
    decorators = getattr(node, "decorator_list", [])
    start = min([node.lineno, *(d.lineno for d in decorators)])
    end = node.end_lineno or node.lineno
    cuts = _cut_points(node)
    bounds = sorted({start, *(line for line, _ in cuts if start < line <= end)})
    ranks: dict[int, int | None] = {}
    for line, rank in cuts:
        # Two reasons to start a unit on one line: the one that keeps it wins.
        ranks[line] = None if line in ranks and ranks[line] is None else rank
    units = []
    for i, first in enumerate(bounds):
        last = bounds[i + 1] - 1 if i + 1 < len(bounds) else end
        chunk = "".join(lines[first - 1 : last])
        if chunk and not chunk.endswith("\n"):
            chunk += "\n"
        units.append(Unit(chunk, ranks.get(first) if first != start else None))
    return Piece(path, name, kind, start, end, tuple(units))


def _cut_points(node: ast.stmt) -> list[tuple[int, int | None]]:
    """Lines where a unit starts, with its cut rank: the cases of a decorator's or an assignment's
    list, the statements of a body; a line after a run of cases (its closing bracket) is never cut."""
    points: list[tuple[int, int | None]] = []
    lists: list[ast.expr] = []
    for decorator in getattr(node, "decorator_list", []):
        if isinstance(decorator, ast.Call):
            values = [*decorator.args, *(k.value for k in decorator.keywords)]  # argvalues=, ids=
            lists.extend(a for a in values if isinstance(a, ast.List | ast.Tuple))
    value = getattr(node, "value", None)
    if isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(
        value, ast.List | ast.Tuple | ast.Set | ast.Dict
    ):
        lists.append(value)
    for sequence in lists:
        items: list[ast.expr] = list(getattr(sequence, "elts", None) or getattr(sequence, "values", []))
        starts = [e.lineno for e in items]
        if len(set(starts)) != len(starts):
            continue  # cases that share a line cannot be cut apart at a line
        for index, line in enumerate(starts):
            points.append((line, 2 if index < KEEP_CASES else 0))
        if items and (items[-1].end_lineno or 0) < (sequence.end_lineno or 0):
            points.append(((items[-1].end_lineno or 0) + 1, None))
        elif items:
            # The list closes on its last case's line (``(7, 8)])``): cutting that case would cut the
            # bracket, so it stays.
            points.append((starts[-1], None))
    body = getattr(node, "body", None)
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        points.append((node.lineno, None))  # the signature is never cut, whatever ends above it
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and body:
        for statement in body:
            first = min([statement.lineno, *(d.lineno for d in getattr(statement, "decorator_list", []))])
            points.append((first, 1))
    return points
