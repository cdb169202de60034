"""``make-suite --disguise``: behaviour-preserving changes that make a public library read unlike the
copy a model may have memorised, keeping its public API and its tests working.

Per library module: module-private names (``_name`` at the top level, used by no other file of the
library, its tests included) get new private names; locals of some functions are renamed (as a review
task's rewrite does); runs of consecutive top-level functions are put in another order when nothing in
them is evaluated at definition time that names another of the run. ``make-suite`` runs the library's
tests on the disguised code for its baseline, so a disguise that broke something is an error, never a
suite.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import libcst as cst

from coderefine.bench.rewrite import RENAME, rewrite_function

MAX_FUNCTIONS = 20  # functions per module whose locals are renamed (each is a parse of the module)
_WORDS = ("plain", "inner", "base", "raw", "local", "quick", "small", "core", "step", "part", "unit", "form")


@dataclass(frozen=True)
class Disguise:
    renamed: int  # module-private names
    locals_renamed: int  # functions whose locals were renamed
    moved: int  # runs of top-level functions reordered


def disguise_tree(tree: Path, modules: Sequence[str], seed: int) -> Disguise:
    """Disguise ``modules`` (paths relative to ``tree``) in place."""
    rng = random.Random(f"disguise:{seed}")
    every = {p: p.read_text("utf-8", errors="replace") for p in sorted(tree.rglob("*.py"))}
    renamed = functions = moved = 0
    for module in modules:
        path = tree / module
        others = "\n".join(text for p, text in every.items() if p != path)
        text = path.read_text("utf-8")
        text, count = rename_private(text, others, rng)
        renamed += count
        text, count = rename_locals(text, rng)
        functions += count
        text, count = reorder(text, rng)
        moved += count
        path.write_text(text, "utf-8")
    return Disguise(renamed, functions, moved)


def rename_private(text: str, others: str, rng: random.Random) -> tuple[str, int]:
    """Give the module's private top-level names new private names, where that is certainly safe."""
    module = cst.parse_module(text)
    facts = _Facts()
    module.visit(facts)
    taken = facts.names | set(re.findall(r"\b\w+\b", others))
    mapping: dict[str, str] = {}
    for name in sorted(facts.private):
        if name in facts.unsafe or re.search(rf"\b{re.escape(name)}\b", others):
            continue  # used by another file, as a keyword, or listed by name: keep it
        new = _fresh(name, taken, rng)
        taken.add(new)
        mapping[name] = new
    # Every use must be a name the renamer sees: a name left in a string (getattr, __all__, a docstring)
    # may be reached another way, so it keeps its name.
    kept = {old for old in mapping if re.search(rf"\b{re.escape(old)}\b", _strings_and_comments(module))}
    mapping = {old: new for old, new in mapping.items() if old not in kept}
    if not mapping:
        return text, 0
    return module.visit(_Renamer(mapping)).code, len(mapping)


def _strings_and_comments(module: cst.Module) -> str:
    found: list[str] = []

    class Texts(cst.CSTVisitor):
        def visit_SimpleString(self, node: cst.SimpleString) -> None:
            found.append(node.value)

        def visit_FormattedStringText(self, node: cst.FormattedStringText) -> None:
            found.append(node.value)

        def visit_Comment(self, node: cst.Comment) -> None:
            found.append(node.value)

    module.visit(Texts())
    return "\n".join(found)


def rename_locals(text: str, rng: random.Random) -> tuple[str, int]:
    module = cst.parse_module(text)
    names = _Functions()
    module.visit(names)
    chosen = sorted(names.found)
    rng.shuffle(chosen)
    done = 0
    for qualname in sorted(chosen[:MAX_FUNCTIONS]):
        result = rewrite_function(text, qualname, rng.randrange(1 << 30), only=frozenset((RENAME,)))
        if result.kinds:
            text, done = result.text, done + 1
    return text, done


def reorder(text: str, rng: random.Random) -> tuple[str, int]:
    """Shuffle each run of consecutive, undecorated top-level functions whose defaults and annotations
    name none of the run (they are evaluated when the function is defined)."""
    module = cst.parse_module(text)
    body = list(module.body)
    moved = 0
    start = 0
    while start < len(body):
        end = start
        while end < len(body) and _movable(body[end]):
            end += 1
        if end - start >= 2:
            run = body[start:end]
            names = {f.name.value for f in run if isinstance(f, cst.FunctionDef)}
            if not any(_evaluated_names(f) & names for f in run):
                order = list(range(len(run)))
                rng.shuffle(order)
                if order != sorted(order):
                    body[start:end] = [_spaced(run[i], run[0]) for i in order]
                    moved += 1
        start = end + 1
    return (module.with_changes(body=body).code, moved) if moved else (text, 0)


def _movable(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.FunctionDef) and not statement.decorators


def _spaced(statement: cst.BaseStatement, first: cst.BaseStatement) -> cst.FunctionDef:
    """Keep the blank lines between definitions as they were at the run's start (comments travel)."""
    assert isinstance(statement, cst.FunctionDef) and isinstance(first, cst.FunctionDef)
    comments = [line for line in statement.leading_lines if line.comment is not None]
    blanks = [line for line in first.leading_lines if line.comment is None]
    return statement.with_changes(leading_lines=[*blanks, *comments])


def _evaluated_names(function: cst.BaseStatement) -> set[str]:
    assert isinstance(function, cst.FunctionDef)
    collector = _Facts()
    function.params.visit(collector)
    if function.returns is not None:
        function.returns.visit(collector)
    return collector.names


def _fresh(name: str, taken: set[str], rng: random.Random) -> str:
    stem = name.strip("_")
    while True:
        new = f"_{rng.choice(_WORDS)}_{stem}"
        if new not in taken:
            return new
        stem += "_"


class _Facts(cst.CSTVisitor):
    """Names used; private top-level definitions; names that also serve as parameters or keywords."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.private: set[str] = set()
        self.unsafe: set[str] = set()
        self.depth = 0

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)

    def visit_Param(self, node: cst.Param) -> None:
        self.unsafe.add(node.name.value)

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self.unsafe.add(node.keyword.value)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.unsafe.add(node.attr.value)

    def _define(self, name: str) -> None:
        if self.depth == 0 and name.startswith("_") and not name.startswith("__"):
            self.private.add(name)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._define(node.name.value)
        self.depth += 1

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.depth -= 1

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._define(node.name.value)
        self.depth += 1

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.depth -= 1

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        if isinstance(node.target, cst.Name):
            self._define(node.target.value)


class _Functions(cst.CSTVisitor):
    def __init__(self) -> None:
        self.scope: list[str] = []
        self.found: set[str] = set()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.scope.append(node.name.value)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.scope.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.found.add(".".join([*self.scope, node.name.value]))
        return False  # nested functions are renamed with their enclosing function


class _Renamer(cst.CSTTransformer):
    def __init__(self, mapping: dict[str, str]) -> None:
        self.mapping = mapping

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        new = self.mapping.get(original_node.value)
        return updated_node.with_changes(value=new) if new else updated_node
