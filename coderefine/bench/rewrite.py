"""Behaviour-preserving rewrites of one function, with libcst: the refactorings of a review task's diff.

Three rewrites, each one a refactoring a reviewer sees every day: a local renamed (every use, in the
function and the scopes nested in it), the value of a ``return`` extracted into a variable, and an
``if``/``else`` inverted with its condition. None changes behaviour: a renamed local gets a name that
appears nowhere in the module (so it shadows nothing) and says no less than the old one (an abbreviation
spelled out, or the name qualified by the function's), parameters are never renamed (callers may pass
them by keyword), and a function that reads its locals by name (``locals()``, ``eval``) is left alone.
The choices depend only on the function's code and ``seed``, so the same rewrite applies to a clean
function and to its mutant alike.
"""

from __future__ import annotations

import builtins
import keyword
import random
from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst

RENAME, EXTRACT, INVERT = "rename", "extract", "invert"
# A renamed local must read no worse than before, or a reviewer who says the names got vaguer is right:
# an abbreviation is spelled out; any other name is qualified by the function's name
# (``parts`` in ``words()`` becomes ``words_parts``), never swapped for a vaguer word.
_EXPANSIONS = {
    "arr": "array",
    "attr": "attribute",
    "attrs": "attributes",
    "buf": "buffer",
    "cfg": "config",
    "ch": "char",
    "cnt": "count",
    "cur": "current",
    "curr": "current",
    "elem": "element",
    "elems": "elements",
    "i": "index",
    "idx": "index",
    "k": "key",
    "ln": "line",
    "msg": "message",
    "num": "number",
    "nums": "numbers",
    "pos": "position",
    "prev": "previous",
    "res": "result",
    "sep": "separator",
    "v": "value",
    "val": "value",
    "vals": "values",
}
_RESULTS = ("result", "outcome", "out", "ret", "answer")
_DYNAMIC = {"locals", "vars", "eval", "exec", "globals"}
_NEGATE = {
    cst.Equal: cst.NotEqual,
    cst.NotEqual: cst.Equal,
    cst.Is: cst.IsNot,
    cst.IsNot: cst.Is,
    cst.In: cst.NotIn,
    cst.NotIn: cst.In,
}
_ATOMS = (cst.Name, cst.Call, cst.Attribute, cst.Subscript)


@dataclass(frozen=True)
class Rewrite:
    """A rewritten module and what was done to the function, in order."""

    text: str
    kinds: tuple[str, ...]
    spelled_out: bool = False  # every rename spelled out an abbreviation


def rewrite_function(
    text: str, qualname: str, seed: int, only: frozenset[str] = frozenset((RENAME, EXTRACT, INVERT))
) -> Rewrite:
    """``text`` with the function ``qualname`` rewritten (renames, an extracted return value, an
    inverted if/else, as the function allows; ``only`` these kinds); ``kinds`` is empty when none
    applies."""
    module = cst.parse_module(text)
    finder = _Finder(qualname)
    module.visit(finder)
    function = finder.found
    if function is None:
        return Rewrite(text, ())
    facts = _Facts()
    # The function's own parameters too: a parameter it assigns again (``number = abs(number)``) is
    # still a parameter, which a caller may pass by keyword.
    function.params.visit(facts)
    function.body.visit(facts)
    if facts.names & _DYNAMIC:
        return Rewrite(text, ())
    taken = _all_names(module) | set(dir(builtins))
    rng = random.Random(f"{seed}:{qualname}")
    candidates = sorted(facts.assigned - facts.params - facts.declared)
    rng.shuffle(candidates)
    mapping = _renames(candidates[:2], qualname, taken) if RENAME in only else {}
    result_name = next((n for n in _RESULTS if n not in taken and n not in mapping.values()), "")
    rewriter = _Rewriter(qualname, mapping, result_name if EXTRACT in only else "", INVERT in only)
    changed = module.visit(rewriter)
    kinds = tuple(k for k in (RENAME, EXTRACT, INVERT) if k in rewriter.done)
    return Rewrite(
        changed.code if kinds else text,
        kinds,
        spelled_out=all(_EXPANSIONS.get(o) == n for o, n in mapping.items()),
    )


def _renames(names: Sequence[str], qualname: str, taken: set[str]) -> dict[str, str]:
    """A new name for each of ``names`` that says at least as much: the abbreviation spelled out, or the
    name qualified by the function's own (``parts`` in ``words`` -> ``words_parts``); a name with no
    free such choice keeps its name."""
    qualifier = qualname.rsplit(".", 1)[-1].strip("_").split("_")[0].lower()
    mapping: dict[str, str] = {}
    for name in names:
        bare = name.lstrip("_")
        options = [
            _EXPANSIONS.get(bare, ""),
            f"{qualifier}_{bare}" if qualifier and not bare.startswith(qualifier) else "",
        ]
        chosen = next(
            (
                o
                for o in options
                if o
                and o.isidentifier()
                and not keyword.iskeyword(o)
                and o not in taken
                and o not in mapping.values()
            ),
            None,
        )
        if chosen is not None:
            mapping[name] = chosen
    return mapping


def _all_names(module: cst.Module) -> set[str]:
    collector = _Facts()
    module.visit(collector)
    return collector.names | collector.params


class _Finder(cst.CSTVisitor):
    def __init__(self, qualname: str) -> None:
        self.qualname = qualname
        self.scope: list[str] = []
        self.found: cst.FunctionDef | None = None

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.scope.append(node.name.value)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.scope.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scope.append(node.name.value)
        if ".".join(self.scope) == self.qualname and self.found is None:
            self.found = node

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.scope.pop()


class _Facts(cst.CSTVisitor):
    """Every name used, the names assigned in the function's own scope, every parameter (of nested
    functions and lambdas too) and every name declared global or nonlocal."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.assigned: set[str] = set()
        self.params: set[str] = set()
        self.declared: set[str] = set()
        self.depth = 0

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)

    def visit_Param(self, node: cst.Param) -> None:
        self.params.add(node.name.value)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.depth += 1

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.depth -= 1

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.depth += 1

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.depth -= 1

    def visit_Global(self, node: cst.Global) -> None:
        self.declared |= {n.name.value for n in node.names}

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.declared |= {n.name.value for n in node.names}

    def _target(self, target: cst.BaseExpression) -> None:
        if self.depth:
            return
        if isinstance(target, cst.Name):
            self.assigned.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._target(element.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._target(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._target(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._target(node.target)


class _Rewriter(cst.CSTTransformer):
    def __init__(self, qualname: str, mapping: dict[str, str], result_name: str, invert: bool) -> None:
        self.invert = invert
        self.qualname = qualname
        self.mapping = mapping
        self.result_name = result_name
        self.scope: list[str] = []
        self.inside = 0  # > 0 within the target function; 1 in its own scope
        self.keep: set[int] = set()  # attribute and keyword names: never renamed
        self.done: set[str] = set()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.scope.append(node.name.value)
        if self.inside:
            self.inside += 1

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        self.scope.pop()
        if self.inside:
            self.inside -= 1
        return updated_node

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scope.append(node.name.value)
        if self.inside:
            self.inside += 1
        elif ".".join(self.scope) == self.qualname:
            self.inside = 1

    def leave_FunctionDef(
        self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef
    ) -> cst.FunctionDef:
        self.scope.pop()
        if self.inside:
            self.inside -= 1
        return updated_node

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.keep.add(id(node.attr))

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self.keep.add(id(node.keyword))

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        new = self.mapping.get(original_node.value) if self.inside else None
        if new is None or id(original_node) in self.keep:
            return updated_node
        self.done.add(RENAME)
        return updated_node.with_changes(value=new)

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        if self.inside != 1 or EXTRACT in self.done or not self.result_name or len(updated_node.body) != 1:
            return updated_node
        statement = updated_node.body[0]
        if not isinstance(statement, cst.Return) or not isinstance(
            statement.value, (cst.Call, cst.BinaryOperation, cst.BooleanOperation, cst.Comparison)
        ):
            return updated_node
        self.done.add(EXTRACT)
        name = cst.Name(self.result_name)
        assign = updated_node.with_changes(body=[cst.Assign([cst.AssignTarget(name)], statement.value)])
        trailing = updated_node.trailing_whitespace
        back = cst.SimpleStatementLine([cst.Return(name)], trailing_whitespace=trailing)
        return cst.FlattenSentinel([assign, back])

    def leave_If(self, original_node: cst.If, updated_node: cst.If) -> cst.If:
        orelse = updated_node.orelse
        if not self.invert or self.inside != 1 or INVERT in self.done or not isinstance(orelse, cst.Else):
            return updated_node
        if not isinstance(updated_node.body, cst.IndentedBlock) or not isinstance(
            orelse.body, cst.IndentedBlock
        ):
            return updated_node
        self.done.add(INVERT)
        return updated_node.with_changes(
            test=negate(updated_node.test),
            body=orelse.body,
            orelse=orelse.with_changes(body=updated_node.body),
        )


def negate(test: cst.BaseExpression) -> cst.BaseExpression:
    """``not test``, written as a reader would: ``==`` flips to ``!=`` (only the operators whose
    negation is exact: ``<`` is not ``not >=`` for NaN), ``not x`` becomes ``x``."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not) and not test.lpar:
        inner = test.expression
        return inner.with_changes(lpar=[], rpar=[]) if isinstance(inner, _ATOMS) else inner
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and not test.lpar:
        target = test.comparisons[0]
        flipped = _NEGATE.get(type(target.operator))
        if flipped is not None:
            operator = target.operator
            new = flipped(
                whitespace_before=operator.whitespace_before,  # type: ignore[attr-defined]
                whitespace_after=operator.whitespace_after,  # type: ignore[attr-defined]
            )
            return test.with_changes(comparisons=[target.with_changes(operator=new)])
    if not isinstance(test, _ATOMS) or test.lpar:
        test = test.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]) if not test.lpar else test
    return cst.UnaryOperation(cst.Not(), test)


def intent_for(function: str, kinds: Sequence[str], seed: int, spelled_out: bool = False) -> str:
    """A plausible refactoring message for the pull request, claiming only what the rewrite did."""
    what = {
        RENAME: "spell out abbreviated local names" if spelled_out else "more specific local names",
        EXTRACT: "name the returned value",
        INVERT: "handle the simple case first",
    }
    details = ", ".join(what[k] for k in kinds)
    openings = ("Simplify", "Tidy up", "Refactor", "Clean up")
    opening = openings[random.Random(f"{seed}:{function}").randrange(len(openings))]
    return f"{opening} `{function}()`: {details}; no behaviour change."
