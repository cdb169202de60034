"""A release change too large to be one task, split by the functions and classes it changes.

A file's change is a list of hunks (OLD's lines against NEW's). Each hunk belongs to the definitions it
touches: a top-level function or class, a method of a top-level class, or a top-level statement (an
import, a constant). Definitions are joined into one piece when a hunk touches several of them, when one
fail-to-pass test runs a changed line of each, and when one's changed lines name another whose interface
the release changed (added, removed, a new signature, an import added or dropped): a function's new
version goes with its new helpers, and an old version with the helpers and imports it needs. A piece's
start is NEW's text with only its own hunks put back to OLD's: a state the release could have passed
through, had its changes been committed one piece at a time.
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from coderefine.bench.library import Coverage
from coderefine.pyast import parse_module

MODULE = "(module)"  # the top-level statements that define no name: docstrings, bare calls
Node = tuple[str, str]  # (path, qualified name)


@dataclass(frozen=True)
class Hunk:
    """One difference between OLD's lines and NEW's: OLD's ``[old_start, old_end)`` for NEW's
    ``[new_start, new_end)`` (0-based), and the definitions it belongs to."""

    old_start: int
    old_end: int
    new_start: int
    new_end: int
    names: tuple[str, ...]

    @property
    def size(self) -> int:
        return (self.old_end - self.old_start) + (self.new_end - self.new_start)


@dataclass(frozen=True)
class Piece:
    """Definitions of one or more files changed together, with the fail-to-pass tests that reach them and
    the texts the piece starts from (NEW's, its own hunks put back)."""

    names: tuple[tuple[str, str], ...]  # (path, qualified name)
    tests: tuple[str, ...]
    starts: Mapping[str, str]
    size: int  # lines changed, removed plus added

    @property
    def files(self) -> tuple[str, ...]:
        return tuple(self.starts)

    def describe(self) -> str:
        shown = [f"`{name}`" for _, name in self.names[:3]]
        more = f" and {len(self.names) - 3} more" if len(self.names) > 3 else ""
        return f"{', '.join(self.files)} ({', '.join(shown)}{more})"


@dataclass(frozen=True)
class _Definition:
    name: str
    first: int  # 1-based, decorators included
    last: int
    header_end: int  # the last line before its body (its signature, decorators, bases)
    defines: frozenset[str]  # the names it binds at the top of the module (or the method's own)


def hunks(old: str, new: str) -> list[Hunk]:
    """The hunks of ``old`` -> ``new``, each with the definitions it touches (NEW's where it has lines in
    NEW; OLD's for a deletion; the nearest definition's for a change of blank lines or comments only)."""
    old_lines, new_lines = old.splitlines(), new.splitlines()
    old_defs, new_defs = definitions(old), definitions(new)
    found = []
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        names = _touching(new_defs, j1 + 1, j2) or _touching(old_defs, i1 + 1, i2)
        if not names:
            names = _touching(new_defs, j1, j1) or _touching(new_defs, j2 + 1, j2 + 1) or (MODULE,)
        found.append(Hunk(i1, i2, j1, j2, names))
    return found


def definitions(text: str) -> list[_Definition]:
    """The top-level statements of ``text`` and the methods of its top-level classes, innermost first."""
    try:
        module = parse_module(text)
    except SyntaxError:
        return []
    found: list[_Definition] = []
    for node in module.body:
        if isinstance(node, ast.ClassDef):
            for inner in node.body:
                if isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef):
                    name = f"{node.name}.{inner.name}"
                    found.append(_definition(inner, name, frozenset({inner.name})))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.append(_definition(node, node.name, frozenset({node.name})))
        else:
            bound = frozenset(_bound(node))
            name = min(bound) if bound else MODULE
            found.append(_Definition(name, node.lineno, node.end_lineno or node.lineno, 0, bound))
    return found


def revert(old: str, new: str, chosen: Iterable[Hunk]) -> str:
    """NEW's text with the ``chosen`` hunks put back to OLD's lines."""
    old_lines, new_lines = old.splitlines(keepends=True), new.splitlines(keepends=True)
    back = {(h.new_start, h.new_end, h.old_start) for h in chosen}
    out: list[str] = []
    matcher = difflib.SequenceMatcher(None, old.splitlines(), new.splitlines(), autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        out.extend(old_lines[i1:i2] if tag != "equal" and (j1, j2, i1) in back else new_lines[j1:j2])
    text = "".join(out)
    return text if text.endswith("\n") or not text else text + "\n"


def split_change(
    coverage: Coverage,
    changed: Mapping[str, tuple[str, str]],
    files: Sequence[str],
    tests: Sequence[str],
) -> tuple[list[Piece], list[str]]:
    """``files``' change split into pieces, each with the fail-to-pass ``tests`` that reach it, the
    piece most tests reach first; and the tests that reach no piece (they ran no line of one)."""
    by_file = {path: hunks(*changed[path]) for path in files}
    nodes = [(path, name) for path, found in by_file.items() for h in found for name in h.names]
    parent = {node: node for node in nodes}

    def root(node: tuple[str, str]) -> tuple[str, str]:
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    def join(group: Sequence[tuple[str, str]]) -> None:
        for other in group[1:]:
            parent[root(other)] = root(group[0])

    for path, found in by_file.items():
        for hunk in found:
            join([(path, name) for name in hunk.names])
    join_dependencies(changed, by_file, join)
    index = {nodeid: i for i, nodeid in enumerate(coverage.tests)}
    reaching: dict[str, set[tuple[str, str]]] = {}
    for nodeid in tests:
        reached = _reached(coverage, changed, by_file, index.get(nodeid))
        if reached:
            reaching[nodeid] = reached
            join(sorted(reached))
    groups: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for node in nodes:
        groups.setdefault(root(node), set()).add(node)
    pieces = []
    for members in groups.values():
        reached_by = tuple(n for n in tests if reaching.get(n, set()) & members)
        if not reached_by:
            continue  # no fail-to-pass test runs it: it stays as NEW has it
        starts, size = {}, 0
        for path in files:
            mine = [h for h in by_file[path] if {(path, n) for n in h.names} & members]
            if mine:
                starts[path] = revert(*changed[path], mine)
                size += sum(h.size for h in mine)
        pieces.append(Piece(tuple(sorted(members)), reached_by, starts, size))
    pieces.sort(key=lambda p: (-len(p.tests), p.names))
    return pieces, [n for n in tests if n not in reaching]


def join_dependencies(
    changed: Mapping[str, tuple[str, str]],
    by_file: Mapping[str, Sequence[Hunk]],
    join: Callable[[Sequence[Node]], None],
) -> None:
    """Join each definition to those whose interface the release changed and whose name its changed
    lines (OLD's or NEW's) mention: top-level names across files, a method's name in its own file."""
    interface: dict[str, list[tuple[str, str]]] = {}
    for path, found in by_file.items():
        old, new = changed[path]
        for name, words in _interface_changes(old, new, found).items():
            for word in words:
                interface.setdefault(word, []).append((path, name))
    for path, found in by_file.items():
        old_lines, new_lines = changed[path][0].splitlines(), changed[path][1].splitlines()
        for hunk in found:
            text = "\n".join(
                old_lines[hunk.old_start : hunk.old_end] + new_lines[hunk.new_start : hunk.new_end]
            )
            for word in set(re.findall(r"[A-Za-z_]\w*", text)):
                for other_path, other in interface.get(word, ()):
                    if other_path == path or "." not in other:
                        join([(path, hunk.names[0]), (other_path, other)])


def _interface_changes(old: str, new: str, found: Sequence[Hunk]) -> dict[str, set[str]]:
    """Per changed definition, the names whose meaning to other code the release changed: a definition
    added or removed, or whose signature (or bases, or decorators) changed; an import's added or dropped
    names; a changed constant's names."""
    old_defs = {d.name: d for d in definitions(old)}
    new_defs = {d.name: d for d in definitions(new)}
    touched_new = [(h.new_start + 1, h.new_end) for h in found]
    touched_old = [(h.old_start + 1, h.old_end) for h in found]
    changes: dict[str, set[str]] = {}
    for name in {n for h in found for n in h.names}:
        before, after = old_defs.get(name), new_defs.get(name)
        if before is None or after is None:
            either = before or after
            changes[name] = set(either.defines) if either else set()
        elif after.header_end:  # a function or a class
            headers = _overlaps(touched_new, after.first, after.header_end)
            changes[name] = (
                set(after.defines)
                if headers or _overlaps(touched_old, before.first, before.header_end)
                else set()
            )
        else:  # an import or an assignment: what it binds differently
            changes[name] = set(after.defines ^ before.defines) or set(after.defines)
    return changes


def _reached(
    coverage: Coverage,
    changed: Mapping[str, tuple[str, str]],
    by_file: Mapping[str, Sequence[Hunk]],
    number: int | None,
) -> set[tuple[str, str]]:
    """The definitions one test reaches: those whose NEW changed lines it runs; failing that, the changed
    ones any line of which it runs (a change of a signature alone runs at import, not in the test)."""
    if number is None:
        return set()
    found: set[tuple[str, str]] = set()
    for path, found_hunks in by_file.items():
        ran = {line for line, tests in coverage.lines.get(path, {}).items() if number in tests}
        for hunk in found_hunks:
            # A deletion has no line of NEW: the lines around it stand for it, as in ``differing_lines``.
            if hunk.new_end > hunk.new_start:
                lines = set(range(hunk.new_start + 1, hunk.new_end + 1))
            else:
                lines = {hunk.new_start, hunk.new_start + 1}
            if lines & ran:
                found.update((path, name) for name in hunk.names)
    if found:
        return found
    for path, found_hunks in by_file.items():
        ran = {line for line, tests in coverage.lines.get(path, {}).items() if number in tests}
        spans = {d.name: d for d in definitions(changed[path][1])}
        for hunk in found_hunks:
            for name in hunk.names:
                span = spans.get(name)
                if span and ran & set(range(span.first, span.last + 1)):
                    found.add((path, name))
    return found


def _touching(found: Sequence[_Definition], first: int, last: int) -> tuple[str, ...]:
    """The innermost definitions that hold a line of ``first``..``last`` (1-based), in order."""
    names: list[str] = []
    for line in range(first, last + 1):
        holding = [d for d in found if d.first <= line <= d.last]
        if holding:
            name = min(holding, key=lambda d: d.last - d.first).name
            if name not in names:
                names.append(name)
    return tuple(names)


def _overlaps(spans: Sequence[tuple[int, int]], first: int, last: int) -> bool:
    return any(start <= last and first <= max(end, start) for start, end in spans)


def _definition(
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, name: str, defines: frozenset[str]
) -> _Definition:
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    header_end = max(node.body[0].lineno - 1, node.lineno)
    return _Definition(name, first, node.end_lineno or node.lineno, header_end, defines)


def _bound(node: ast.stmt) -> Iterable[str]:
    if isinstance(node, ast.Import | ast.ImportFrom):
        for alias in node.names:
            yield (alias.asname or alias.name).split(".")[0]
    elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            for inner in ast.walk(target):
                if isinstance(inner, ast.Name):
                    yield inner.id
