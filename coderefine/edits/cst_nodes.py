"""What a statement of a libcst module is, for placing definitions by name: its name, whether it is an
import or a docstring, its code, its decorators, a class's members, and the blank lines around it."""

from __future__ import annotations

from typing import TypeVar

import libcst as cst

NodeT = TypeVar("NodeT", bound=cst.BaseStatement)


def definition_name(statement: cst.CSTNode) -> str | None:
    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        return statement.name.value
    return None


def assigned_name(statement: cst.CSTNode) -> str | None:
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        small = statement.body[0]
        if isinstance(small, cst.Assign) and len(small.targets) == 1:
            target = small.targets[0].target
            return target.value if isinstance(target, cst.Name) else None
        if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
            return small.target.value
    return None


def is_import(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body
    )


def is_docstring(statement: cst.CSTNode) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString, cst.Ellipsis))
    )


def node_code(module: cst.Module, node: cst.CSTNode) -> str:
    return module.code_for_node(node).strip()


def keep_spacing(old: cst.CSTNode, new: NodeT) -> NodeT:
    """The new statement with the blank lines (and comments) that stood before the old one, unless the new
    one brings comments of its own."""
    new_lines = getattr(new, "leading_lines", ())
    if any(line.comment is not None for line in new_lines):
        return new
    return new.with_changes(leading_lines=getattr(old, "leading_lines", ()))


def appended_with(statement: NodeT, blank_lines: int) -> NodeT:
    if not hasattr(statement, "leading_lines"):
        return statement
    comments = [line for line in statement.leading_lines if line.comment is not None]
    return statement.with_changes(
        leading_lines=[cst.EmptyLine(indent=False) for _ in range(blank_lines)] + comments
    )


def decorator_texts(node: cst.CSTNode) -> tuple[str, ...]:
    empty = cst.Module(body=[])
    return tuple(empty.code_for_node(d.decorator) for d in getattr(node, "decorators", ()))


def class_members(cls: cst.ClassDef) -> list[cst.BaseStatement]:
    inner = cls.body
    return list(inner.body) if isinstance(inner, cst.IndentedBlock) else []


def member_index(cls: cst.ClassDef, name: str) -> int | None:
    return next((i for i, member in enumerate(class_members(cls)) if definition_name(member) == name), None)
