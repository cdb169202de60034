"""Mutation operators that read as plausible code, and the removal of a function's body, with libcst.

Each operator proposes sites in a module; a site is applied by replacing one node, so the rest of the file
keeps its exact text. Sites are listed in source order, so a seeded choice among them is deterministic.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

_SWAP_COMPARE: dict[
    type[cst.BaseCompOp], type[cst.LessThan | cst.LessThanEqual | cst.GreaterThan | cst.GreaterThanEqual]
] = {
    cst.LessThan: cst.LessThanEqual,
    cst.LessThanEqual: cst.LessThan,
    cst.GreaterThan: cst.GreaterThanEqual,
    cst.GreaterThanEqual: cst.GreaterThan,
}
# A constant moves to a value a person could have meant: an off-by-one, or the other common unit.
_NEAR = {1000: 1024, 1024: 1000, 60: 30, 24: 12, 12: 24, 365: 366, 100: 10, 10: 100, 0: 1}


@dataclass(frozen=True)
class Site:
    """One place a mutation can be made: a span of the source (lines 1-based, columns 0-based, the end
    exclusive) and the text that replaces it."""

    function: str  # qualified name of the enclosing function
    operator: str
    line: int  # the line the mutation is about
    start: tuple[int, int]
    end: tuple[int, int]
    text: str

    def apply(self, source: str) -> str:
        lines = source.splitlines(keepends=True)
        offsets = [0]
        for line in lines:
            offsets.append(offsets[-1] + len(line))
        first = offsets[self.start[0] - 1] + self.start[1]
        last = offsets[self.end[0] - 1] + self.end[1] if self.end[0] <= len(lines) else len(source)
        return source[:first] + self.text + source[last:]


@dataclass(frozen=True)
class FunctionInfo:
    qualname: str
    line: int
    end_line: int
    docstring: str
    statements: int


class _Collector(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, module: cst.Module, source: str) -> None:
        self._module = module
        self._source_lines = source.splitlines(keepends=True)
        self.sites: list[Site] = []
        self.functions: list[FunctionInfo] = []
        self._scope: list[str] = []
        self._functions: list[str] = []
        self._locals: list[list[str]] = []

    def _line(self, node: cst.CSTNode) -> int:
        return self.get_metadata(PositionProvider, node).start.line

    def _add(self, operator: str, node: cst.CSTNode, after: cst.CSTNode) -> None:
        """A site that replaces ``node``'s own span with the code of ``after``."""
        if self._functions:
            position = self.get_metadata(PositionProvider, node)
            start = (position.start.line, position.start.column)
            end = (position.end.line, position.end.column)
            text = self._module.code_for_node(after)
            self.sites.append(Site(self._functions[-1], operator, start[0], start, end, text))

    def _add_lines(self, operator: str, first: int, last: int, text: str, line: int) -> None:
        """A site that replaces whole lines ``first``..``last`` with ``text``."""
        if self._functions:
            self.sites.append(Site(self._functions[-1], operator, line, (first, 0), (last + 1, 0), text))

    def _lines(self, node: cst.CSTNode) -> tuple[int, int]:
        position = self.get_metadata(PositionProvider, node)
        return position.start.line, position.end.line

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._scope.append(node.name.value)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._scope.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scope.append(node.name.value)
        qualname = ".".join(self._scope)
        self._functions.append(qualname)
        params = [*node.params.posonly_params, *node.params.params, *node.params.kwonly_params]
        names = [p.name.value for p in params]
        self._locals.append([n for n in names if n not in ("self", "cls")])
        position = self.get_metadata(PositionProvider, node)
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
        self.functions.append(
            FunctionInfo(
                qualname,
                position.start.line,
                position.end.line,
                node.get_docstring() or "",
                len(body) - (1 if node.get_docstring() is not None else 0),
            )
        )

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._scope.pop()
        self._functions.pop()
        self._locals.pop()

    def leave_Assign(self, original_node: cst.Assign) -> None:
        node = original_node
        if self._locals:
            for target in node.targets:
                if isinstance(target.target, cst.Name) and target.target.value not in self._locals[-1]:
                    self._locals[-1].append(target.target.value)

    def visit_Integer(self, node: cst.Integer) -> None:
        try:
            value = int(node.value.replace("_", ""), 0)
        except ValueError:
            return
        if value in _NEAR:
            self._add("constant", node, node.with_changes(value=str(_NEAR[value])))
        elif 1 < value < 10_000:
            self._add("constant", node, node.with_changes(value=str(value + 1)))

    def visit_ComparisonTarget(self, node: cst.ComparisonTarget) -> None:
        swapped = _SWAP_COMPARE.get(type(node.operator))
        if swapped is not None:
            current = node.operator
            assert isinstance(
                current, cst.LessThan | cst.LessThanEqual | cst.GreaterThan | cst.GreaterThanEqual
            )
            operator = swapped(
                whitespace_before=current.whitespace_before, whitespace_after=current.whitespace_after
            )
            self._add("boundary", node, node.with_changes(operator=operator))

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        op = node.operator
        other = cst.Or if isinstance(op, cst.And) else cst.And
        new = other(whitespace_before=op.whitespace_before, whitespace_after=op.whitespace_after)
        self._add("and-or", node, node.with_changes(operator=new))

    def visit_Call(self, node: cst.Call) -> None:
        positional = [a for a in node.args if a.keyword is None and not a.star]
        for first, second in itertools.pairwise(positional):
            if isinstance(first.value, cst.Name) and isinstance(second.value, cst.Name):
                known = self._locals[-1] if self._locals else []
                pair = (first.value.value, second.value.value)
                if pair[0] != pair[1] and pair[0] in known and pair[1] in known:
                    args = [
                        a.with_changes(value=second.value)
                        if a is first
                        else a.with_changes(value=first.value)
                        if a is second
                        else a
                        for a in node.args
                    ]
                    self._add("swap-args", node, node.with_changes(args=args))
                    return

    def visit_Arg(self, node: cst.Arg) -> None:
        if self._locals and isinstance(node.value, cst.Name) and node.keyword is None:
            name = node.value.value
            known = self._locals[-1]
            if name in known:
                others = [n for n in known if n != name]
                if others:
                    # The nearest other local by first appearance: the likeliest mix-up.
                    index = known.index(name)
                    other = others[min(index, len(others) - 1)]
                    self._add("variable", node.value, cst.Name(other))

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        body = list(node.body)
        for index, statement in enumerate(body):
            if (
                len(body) > 1
                and isinstance(statement, cst.SimpleStatementLine)
                and len(statement.body) == 1
                and isinstance(statement.body[0], cst.Expr)
                and isinstance(statement.body[0].value, cst.Call)
            ):
                first, last = self._lines(statement)
                self._add_lines("drop-call", first, last, "", first)
            if (
                index > 0
                and isinstance(statement, cst.SimpleStatementLine)
                and isinstance(statement.body[0], cst.Return | cst.Break)
                and isinstance(body[index - 1], cst.SimpleStatementLine)
                and not isinstance(body[index - 1].body[0], cst.Return | cst.Break)  # type: ignore[attr-defined]
            ):
                a, b = self._lines(body[index - 1])
                c, d = self._lines(statement)
                if c == b + 1:  # adjacent, no comment between them
                    moved = "".join(self._source_lines[c - 1 : d] + self._source_lines[a - 1 : b])
                    self._add_lines("move-exit", a, d, moved, c)


def sites(source: str) -> tuple[list[Site], list[FunctionInfo]]:
    """Every mutation site of ``source`` and every function, in source order; but for the functions a
    task could not name: one whose text is in the module more than once (pyflakes' message classes
    share their ``__init__`` word for word), which no edit of it can be found by, and one whose name
    another shares (a property's getter and setter)."""
    module = cst.parse_module(source)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    collector = _Collector(module, source)
    wrapper.visit(collector)
    names = Counter(f.qualname for f in collector.functions)
    named = {
        f.qualname
        for f in collector.functions
        if names[f.qualname] == 1 and source.count(function_text(source, f)) == 1
    }
    return (
        [s for s in collector.sites if s.function in named],
        [f for f in collector.functions if f.qualname in named],
    )


def apply(source: str, chosen: list[Site]) -> str:
    """``source`` with the sites applied (sites of the same source that do not overlap)."""
    for site in sorted(chosen, key=lambda s: s.start, reverse=True):
        source = site.apply(source)
    return source


def remove_body(source: str, qualname: str, *, keep_docstring: bool = True) -> str:
    """``source`` with the body of ``qualname`` replaced by its docstring (unless not ``keep_docstring``)
    and a ``raise``."""
    module = cst.parse_module(source)
    remover = _BodyRemover(qualname, keep_docstring)
    changed = module.visit(remover)
    if not remover.done:
        raise ValueError(f"no function {qualname}")
    return changed.code


class _BodyRemover(cst.CSTTransformer):
    def __init__(self, qualname: str, keep_docstring: bool = True) -> None:
        self.qualname = qualname
        self.keep_docstring = keep_docstring
        self.scope: list[str] = []
        self.done = False

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.scope.append(node.name.value)

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        self.scope.pop()
        return updated_node

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scope.append(node.name.value)

    def leave_FunctionDef(
        self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef
    ) -> cst.FunctionDef:
        here = ".".join(self.scope)
        self.scope.pop()
        if here != self.qualname or self.done or not isinstance(updated_node.body, cst.IndentedBlock):
            return updated_node
        self.done = True
        body = list(updated_node.body.body)
        kept = body[:1] if self.keep_docstring and updated_node.get_docstring() is not None else []
        stub = cst.SimpleStatementLine([cst.Raise(exc=cst.Name("NotImplementedError"))])
        return updated_node.with_changes(body=updated_node.body.with_changes(body=[*kept, stub]))


def function_text(source: str, info: FunctionInfo) -> str:
    lines = source.splitlines(keepends=True)
    return "".join(lines[info.line - 1 : info.end_line])


def changed_lines(before: str, after: str) -> Iterator[int]:
    """Line numbers (1-based, in ``before``) that differ, for a mutant of the same line count or less."""
    old, new = before.splitlines(), after.splitlines()
    for number, (a, b) in enumerate(zip(old, new, strict=False), start=1):
        if a != b:
            yield number


def changed_function(text: str, info: FunctionInfo, chosen: Sequence[Site]) -> str:
    """The text of one function with the sites inside it applied (they may remove a line)."""
    own = apply(text, [s for s in chosen if s.function == info.qualname])
    delta = len(own.splitlines()) - len(text.splitlines())
    return function_text(own, replace(info, end_line=info.end_line + delta))
