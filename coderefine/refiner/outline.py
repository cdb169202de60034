"""The outline of what a view leaves out: the hidden definitions with their line numbers, in three forms
from the fullest to the shortest, so that a long module's map keeps to the code budget.

- ``signatures``: each hidden definition on a line, ``line: signature``, nested ones indented;
- ``methods``: top-level definitions with their signatures, and a class's hidden methods folded onto its
  line as ``name:line`` (a 1,960-line module's outline of 300 signatures took 8,100 of the 12,000
  characters of a small model's code budget, more than the code the failing tests pointed at);
- ``classes``: top-level definitions alone, a class with the count of its hidden methods;
- ``names``: top-level definitions as ``name:line``, several to a line (a module of 200 functions, such as
  more-itertools' 4,980-line more.py, kept 1,850 tokens of signatures beside 550 of the code in focus).

Every form keeps the names and lines: a model can ask for any of them by name (``asks.py``).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

Form = Literal["signatures", "methods", "classes", "names"]
FORMS: tuple[Form, ...] = ("signatures", "methods", "classes", "names")
NAMES_LINE = 100  # characters of a line of the ``names`` form


@dataclass(frozen=True)
class Definition:
    name: str
    start: int  # its first decorator
    end: int
    depth: int
    signature: str
    calls: frozenset[str]
    # The definition this one is nested in: its first line and signature (0 and "" at the top level).
    parent: int = 0
    parent_signature: str = ""


def definitions_of(tree: ast.Module) -> list[Definition]:
    """Every function and class of ``tree``, in order, nested ones after their parent."""
    found: list[Definition] = []

    def walk(node: ast.AST, depth: int, prefix: str, parent: Definition | None = None) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                start = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                calls = frozenset(
                    c.func.id if isinstance(c.func, ast.Name) else c.func.attr
                    for c in ast.walk(child)
                    if isinstance(c, ast.Call) and isinstance(c.func, ast.Name | ast.Attribute)
                )
                found.append(
                    Definition(
                        child.name,
                        start,
                        child.end_lineno or child.lineno,
                        depth,
                        prefix + signature(child),
                        calls,
                        parent.start if parent is not None else 0,
                        parent.signature.strip() if parent is not None else "",
                    )
                )
                walk(child, depth + 1, prefix + "    ", found[-1])
            else:
                walk(child, depth, prefix, parent)

    walk(tree, 0, "")
    return found


def signature(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> str:
    if isinstance(node, ast.ClassDef):
        bases = ", ".join(ast.unparse(b) for b in node.bases)
        return f"class {node.name}" + (f"({bases})" if bases else "")
    args = node.args
    names = [a.arg for a in (*args.posonlyargs, *args.args)]
    if args.vararg:
        names.append("*" + args.vararg.arg)
    elif args.kwonlyargs:
        names.append("*")
    names += [a.arg for a in args.kwonlyargs]
    if args.kwarg:
        names.append("**" + args.kwarg.arg)
    keyword = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
    return f"{keyword} {node.name}({', '.join(names)})"


def outline_of(hidden: Sequence[Definition], form: Form = "signatures") -> str:
    """The outline of the ``hidden`` definitions (in file order, as ``definitions_of`` gives them) in
    ``form``. In the shorter forms a hidden method whose class is shown in part is still named, on a
    line of its class's own; a definition nested in a function, or in a method, is left to its owner."""
    if form == "signatures":
        return "\n".join(f"{d.start}: {d.signature}" for d in hidden)
    if form == "names":
        return _packed(_names(hidden))
    lines: dict[int, str] = {}
    members: dict[int, list[str]] = {}
    last_signature, last_start = "", 0
    for d in hidden:
        if d.depth == 0:
            if d.signature == last_signature and not members.get(last_start):
                # Overloads (`typing.overload`) repeat one signature: one line for all of them.
                first, _, rest = lines.pop(last_start).partition(": ")
                lines[last_start] = f"{first}, {d.start}: {rest}"
                continue
            lines[d.start] = f"{d.start}: {d.signature}"
            last_signature, last_start = d.signature, d.start
        elif d.depth == 1 and d.parent_signature.startswith("class "):
            if d.parent not in lines:
                lines[d.parent] = f"{d.parent}: {d.parent_signature} (shown in part)"
            members.setdefault(d.parent, []).append(f"{d.name}:{d.start}")
    for start, names in members.items():
        count = f"{len(names)} method" + ("s" if len(names) != 1 else "")
        lines[start] += ": " + ", ".join(names) if form == "methods" else f" [{count}]"
    return "\n".join(lines[start] for start in sorted(lines))


def _names(hidden: Sequence[Definition]) -> list[str]:
    """Each hidden top-level definition as ``name:line`` (overloads as one), a class with the count of its
    hidden methods as in the ``classes`` form (also a class shown in part)."""
    names: dict[int, str] = {}
    seen: set[str] = set()
    methods: dict[int, int] = {}
    for d in hidden:
        if d.depth == 0 and d.name not in seen:
            seen.add(d.name)
            names[d.start] = f"{d.name}:{d.start}"
        elif d.depth == 1 and d.parent_signature.startswith("class "):
            methods[d.parent] = methods.get(d.parent, 0) + 1
            owner = d.parent_signature.split()[1].split("(")[0]
            names.setdefault(d.parent, f"{owner}:{d.parent}")
    return [
        names[start] + (f"[{methods[start]} methods]" if start in methods else "") for start in sorted(names)
    ]


def _packed(entries: Sequence[str]) -> str:
    lines: list[str] = []
    for entry in entries:
        if lines and len(lines[-1]) + 2 + len(entry) <= NAMES_LINE:
            lines[-1] += ", " + entry
        else:
            lines.append(entry)
    return "\n".join(lines)
