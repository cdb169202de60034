"""Whole definitions: an edit format a small model can write, placed by name with libcst.

A small model copies SEARCH lines badly (they must match the file exactly), but it can write a complete
function. In this format the reply holds fenced Python blocks, each after a line with its file's path, and
each block holds complete top-level statements that are put in place by name:

- a ``def`` or ``class`` replaces the top-level definition of that name; a ``def`` that is no top-level
  name but the method of exactly one class replaces that method; a new name is added at the end;
- a ``class`` that leaves out some of the methods or fields of the class it names is a partial class:
  the methods and fields it has replace theirs (or are added), the others stay, and so do the class's
  bases and decorators unless the block writes its own;
- an ``import`` is added after the file's imports unless the file has it already; ``NAME = ...``
  replaces the top-level assignment of that name (or is added after the imports);
- a block that holds all of its file (each definition, complete classes, the imported and assigned names,
  the docstring and every other top-level statement) is the whole file, so it may remove or reorder; so
  is any block for an empty file, and ``whole`` mode reads every block that way.

The placed code then goes through the same gate as every edit. Placeholders ("# ... rest unchanged")
are refused, since putting them in place would delete the code they stand for.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Literal

import libcst as cst

from coderefine.edits.blocks import EditError, EditFailure, resolve_path
from coderefine.edits.code_blocks import CodeBlock
from coderefine.edits.cst_nodes import (
    appended_with,
    assigned_name,
    class_members,
    decorator_texts,
    definition_name,
    is_docstring,
    is_import,
    keep_spacing,
    member_index,
    node_code,
)

Placement = Literal["definition", "whole"]
Statement = cst.SimpleStatementLine | cst.BaseCompoundStatement  # what a module body holds

# A comment that stands for code left out: it opens with an ellipsis, says "rest of ..." or "existing
# code", or says that code (or the rest, or other methods) is unchanged or as before, or is only that.
# Not any comment with "unchanged" in it: "returns the list unchanged on error" is a comment.
_PLACEHOLDER = re.compile(
    r"#\s*(\.\.\.|…)"
    r"|#.*\b(rest of|existing code|remaining code|remainder of)\b"
    r"|#.*\b(code|rest|body|implementation|methods?|functions?|lines|everything|others?)"
    r"( else)?( is| are| remains?| stays?)?( the same| unchanged| as before)\b"
    r"|#\s*\(?\s*(unchanged|same as before|as before)\s*\)?\s*$",
    re.I,
)


def apply_definitions(
    files: Mapping[str, str],
    blocks: Sequence[CodeBlock],
    allowed: Sequence[str],
    placement: Placement = "definition",
) -> dict[str, str]:
    """Put each block in place, in order; return the texts of the files that changed. Every failure is
    collected, so the model hears of all of them at once."""
    current = dict(files)
    failures: list[EditFailure] = []
    for block in blocks:
        block = dataclasses.replace(block, path=resolve_path(block.path, allowed))
        if block.path not in allowed:
            failures.append(
                EditFailure(
                    block.index,
                    block.path,
                    f"names a file that is not under review; only these may change: {', '.join(allowed)}",
                )
            )
            continue
        try:
            current[block.path] = place(current.get(block.path, ""), block, placement)
        except EditError as exc:
            failures.extend(exc.failures)
    if failures:
        raise EditError(failures)
    return {path: text for path, text in current.items() if files.get(path) != text}


def place(text: str, block: CodeBlock, placement: Placement = "definition") -> str:
    """``text`` with the block's statements put in place (see the module's docstring)."""

    def fail(reason: str) -> EditError:
        return EditError([EditFailure(block.index, block.path, reason)])

    placeholder = next(
        (
            line.strip()
            for line in block.code.splitlines()
            if _PLACEHOLDER.search(line) and line.strip() not in text
        ),
        None,
    )
    if placeholder is not None:
        raise fail(
            f"has the placeholder {placeholder!r}; write the complete code, since a placeholder would "
            "replace the code it stands for"
        )
    try:
        new = cst.parse_module(block.code)
    except cst.ParserSyntaxError as exc:
        lines = block.code.splitlines()
        shown = lines[exc.raw_line - 1].strip()[:80] if 0 < exc.raw_line <= len(lines) else ""
        # The line itself: the model (and a reader of the bench's round notes) sees what broke.
        quoted = f", {shown!r}" if shown else ""
        raise fail(f"is not valid Python (line {exc.raw_line}{quoted}: {exc.message})") from exc
    if not new.body:
        raise fail("is empty; write the complete definitions to put in place")
    if block.bare and placement == "whole":
        raise fail("has no fence; write the complete file in a ```python fence")
    if placement == "whole" or not text.strip():
        return _whole(text, block.code)
    module = cst.parse_module(text)
    if not block.bare and _covers(module, new):
        return _whole(text, block.code)
    siblings = Counter(name for statement in new.body if (name := definition_name(statement)))
    seen: Counter[str] = Counter()
    for statement in new.body:
        name = definition_name(statement) or ""
        module = _place_statement(module, statement, fail, (seen[name], siblings[name]))
        seen[name] += 1
    return module.code


def _covers(old: cst.Module, new: cst.Module) -> bool:
    """Whether ``new`` is a whole version of ``old``: it has each of its definitions (every class with all
    its methods and fields), imports, assignments, docstring and other statements. A block with every
    definition's name is not enough: the one function of a script, written alone as asked, would replace
    its imports, constants and ``if __name__`` block."""
    if not old.body:
        return False  # only comments (a licence header): they are kept, and the block placed by name
    wanted, given = _skeleton(old), _skeleton(new)
    if any(given.get(key, 0) < count for key, count in wanted.items()):
        return False
    classes = {c.name.value: c for c in new.body if isinstance(c, cst.ClassDef)}
    return all(
        _complete(c, classes[c.name.value])
        for c in old.body
        if isinstance(c, cst.ClassDef) and c.name.value in classes
    )


def _skeleton(module: cst.Module) -> dict[tuple[str, str], int]:
    """What a module's top level holds, by what names it: definitions, imported and assigned names, a
    docstring; any other statement by its kind (``if``, ``try``, a call), counted."""
    found: dict[tuple[str, str], int] = {}

    def add(key: tuple[str, str]) -> None:
        found[key] = found.get(key, 0) + 1

    for index, statement in enumerate(module.body):
        if (name := definition_name(statement)) is not None:
            add(("definition", name))
        elif is_import(statement):
            assert isinstance(statement, cst.SimpleStatementLine)
            for small in statement.body:
                for imported in _imported_names(small):
                    found[("import", imported)] = 1
        elif (assigned := assigned_name(statement)) is not None:
            found[("assign", assigned)] = 1
        elif index == 0 and is_docstring(statement):
            add(("docstring", ""))
        else:
            inner = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else statement
            add(("statement", type(inner).__name__))
    return found


def _imported_names(small: cst.BaseSmallStatement) -> list[str]:
    if not isinstance(small, (cst.Import, cst.ImportFrom)) or isinstance(small.names, cst.ImportStar):
        return ["*"]
    return [alias.evaluated_alias or cst.Module(body=[]).code_for_node(alias.name) for alias in small.names]


def _complete(old: cst.ClassDef, new: cst.ClassDef) -> bool:
    """Whether ``new`` has every method and class-level field of ``old`` (is no partial class)."""

    def names(cls: cst.ClassDef) -> set[str]:
        return {n for m in class_members(cls) if (n := definition_name(m) or assigned_name(m)) is not None}

    return names(old) <= names(new) and isinstance(new.body, cst.IndentedBlock)


def _whole(text: str, code: str) -> str:
    """The block as the whole file, in the file's own line endings."""
    newline = "\r\n" if "\r\n" in text else "\n"
    return code.replace("\n", newline) if newline != "\n" else code


def _slot(
    olds: Sequence[cst.BaseStatement],
    new: cst.BaseStatement,
    order: tuple[int, int],
    fail: Callable[[str], EditError],
) -> int | None:
    """Where the definition ``new`` goes among ``olds``: the one of its name; of several (a property and
    its setter, overloads, registered handlers), the one with the same decorators, or with ``order`` (its
    place among the block's definitions of that name, and their count) the one in the same place when the
    block writes them all. None for a new name."""
    name = definition_name(new)
    found = [i for i, old in enumerate(olds) if definition_name(old) == name]
    if len(found) <= 1:
        return found[0] if found else None
    ordinal, siblings = order
    if siblings == len(found):
        return found[ordinal]
    same = [i for i in found if decorator_texts(olds[i]) == decorator_texts(new)]
    if len(same) == 1 and siblings == 1:
        return same[0]
    raise fail(
        f"defines {name}, which is defined {len(found)} times there (a property and its setter, overloads "
        f"or registered handlers); write all {len(found)} of them, in their order"
    )


def _place_statement(
    module: cst.Module, statement: Statement, fail: Callable[[str], EditError], order: tuple[int, int]
) -> cst.Module:
    body = list(module.body)
    name = definition_name(statement)
    if name is not None:
        at = _slot(body, statement, order, fail)
        if at is not None:
            old = body[at]
            if isinstance(statement, cst.ClassDef) and isinstance(old, cst.ClassDef):
                body[at] = keep_spacing(old, _merged_class(old, statement, fail))
            else:
                body[at] = keep_spacing(old, statement)
            return module.with_changes(body=body)
        if isinstance(statement, cst.FunctionDef):
            owners = [
                i
                for i, old in enumerate(body)
                if isinstance(old, cst.ClassDef) and member_index(old, statement.name.value) is not None
            ]
            if len(owners) > 1:
                classes = ", ".join(definition_name(body[i]) or "?" for i in owners)
                raise fail(
                    f"defines {name}(), a method of several classes ({classes}); write it inside its "
                    "'class NAME:' line, with the other methods left out"
                )
            if owners:
                owner = body[owners[0]]
                assert isinstance(owner, cst.ClassDef)
                body[owners[0]] = _with_member(owner, statement, fail, order)
                return module.with_changes(body=body)
        return module.with_changes(body=[*body, appended_with(statement, 2)])
    if is_import(statement):
        if any(is_import(old) and node_code(module, old) == node_code(module, statement) for old in body):
            return module
        return module.with_changes(body=_after_imports(body, statement))
    assigned = assigned_name(statement)
    if assigned is not None:
        at = next((i for i, old in enumerate(body) if assigned_name(old) == assigned), None)
        if at is not None:
            body[at] = keep_spacing(body[at], statement)
            return module.with_changes(body=body)
        return module.with_changes(body=_after_imports(body, statement))
    if is_docstring(statement) and body and is_docstring(body[0]):
        body[0] = statement
        return module.with_changes(body=body)
    raise fail(
        f"has '{node_code(cst.Module(body=[]), statement).splitlines()[0]}', which cannot be placed by name; "
        "write only complete functions, classes, imports and NAME = ... assignments, or the whole file "
        "(all of it: every import, assignment and statement it has, too)"
    )


def _after_imports(
    body: Sequence[cst.BaseStatement], statement: cst.BaseStatement
) -> list[cst.BaseStatement]:
    """``body`` with ``statement`` after its last top-level import (after a docstring when it has none)."""
    last = max((i for i, old in enumerate(body) if is_import(old)), default=None)
    if last is None:
        last = 0 if body and is_docstring(body[0]) else -1
    placed = (
        appended_with(statement, 0) if last >= 0 and is_import(body[last]) else appended_with(statement, 1)
    )
    return [*body[: last + 1], placed, *body[last + 1 :]]


def _with_member(
    cls: cst.ClassDef, member: cst.BaseStatement, fail: Callable[[str], EditError], order: tuple[int, int]
) -> cst.ClassDef:
    members = class_members(cls)
    if definition_name(member) is not None:
        at = _slot(members, member, order, fail)
    else:
        name = assigned_name(member)
        at = next(
            (i for i, old in enumerate(members) if name is not None and assigned_name(old) == name), None
        )
    if at is not None:
        members[at] = keep_spacing(members[at], member)
    else:
        members.append(appended_with(member, 1))
    return cls.with_changes(body=cls.body.with_changes(body=members))


def _merged_class(old: cst.ClassDef, new: cst.ClassDef, fail: Callable[[str], EditError]) -> cst.ClassDef:
    """The new class when it has every method and field of the old one; else the old class with the new
    one's methods and assignments put in place (a partial class). Either way the class keeps the old one's
    bases, decorators and docstring where the block writes none: the rules ask for the ``class Name:``
    line, and a model shown only a method writes just that."""
    if not isinstance(new.body, cst.IndentedBlock):
        return new
    if _complete(old, new):
        merged = new
        if not (new.bases or new.keywords):
            merged = merged.with_changes(bases=old.bases, keywords=old.keywords, lpar=old.lpar, rpar=old.rpar)
        if not new.decorators:
            merged = merged.with_changes(decorators=old.decorators)
        old_members, new_members = class_members(old), class_members(new)
        if (
            old_members
            and is_docstring(old_members[0])
            and not (new_members and is_docstring(new_members[0]))
        ):
            merged = merged.with_changes(body=new.body.with_changes(body=[old_members[0], *new_members]))
        return merged
    merged = old
    if new.bases or new.keywords:
        merged = merged.with_changes(bases=new.bases, keywords=new.keywords, lpar=new.lpar, rpar=new.rpar)
    if new.decorators:
        merged = merged.with_changes(decorators=new.decorators)
    siblings = Counter(name for member in class_members(new) if (name := definition_name(member)))
    seen: Counter[str] = Counter()
    for member in class_members(new):
        name = definition_name(member)
        if name or assigned_name(member):
            merged = _with_member(merged, member, fail, (seen[name or ""], siblings[name or ""]))
            seen[name or ""] += 1
    return merged
