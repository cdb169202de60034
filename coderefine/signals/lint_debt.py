"""Old lint on lines a change edited or moved: context, not introduced.

A ruff diagnostic is matched across versions by its content (``Signal.key``: rule, message, the stripped
text of its line), so a diagnostic on a line whose text changed finds no partner: ``zip(a, a)`` with B905
fixed to ``zip(a, b)`` showed B905 as introduced, and the critic asked for ``strict=True``. This pass pairs
what that matching left over: an introduced diagnostic and a vanished one ("fixed") of the same rule in
the same file are one diagnostic when the change rewrote the old line into the new one (the same place
in one region of the line diff), or when both sit in the same function at the same distance from its
``def`` line (code that moved). Each old diagnostic pairs at most once, so a second copy of old debt is
still the change's. Format signals have their own pairing (``base.format_work``).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from coderefine.pyast import parse_module
from coderefine.signals.base import Comparison, LineEdit, Signal


def _functions(text: str) -> list[tuple[int, int, str]]:
    """(first line, last line, qualified name) of every function and class of ``text``."""
    try:
        tree = parse_module(text)
    except (SyntaxError, ValueError):
        return []
    found: list[tuple[int, int, str]] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                found.append((first, child.end_lineno or child.lineno, name))
                walk(child, name + ".")
            else:
                walk(child, prefix)

    walk(tree, "")
    return found


def _position(functions: list[tuple[int, int, str]], line: int) -> tuple[str, int] | None:
    """The innermost function holding ``line`` and the line's distance from its first line."""
    holding = [f for f in functions if f[0] <= line <= f[1]]
    if not holding:
        return None
    first, _, name = max(holding, key=lambda f: f[0])
    return name, line - first


def _rewritten(old: Signal, new: Signal, edits: tuple[LineEdit, ...]) -> bool:
    """Whether one region of the line diff turned ``old``'s line into ``new``'s: both lie in it, at the
    same place give or take the lines the region gained or lost."""
    for e in edits:
        if e.old_first <= old.line <= e.old_last and e.new_first <= new.line <= e.new_last:
            shift = (new.line - e.new_first) - (old.line - e.old_first)
            grown = (e.new_last - e.new_first) - (e.old_last - e.old_first)
            if min(0, grown) <= shift <= max(0, grown):
                return True
    return False


def old_lint(
    comparison: Comparison,
    texts: Mapping[str, tuple[str, str]],
    edits: Mapping[str, tuple[LineEdit, ...]],
) -> Comparison:
    """``comparison`` with the introduced ruff diagnostics that are old ones on edited or moved lines
    counted as existing (``texts``: the text before and the text measured, of each modified file;
    ``edits``: their line edits)."""
    fixed = list(comparison.fixed)
    introduced: list[Signal] = []
    existing = list(comparison.existing)
    functions: dict[str, tuple[list[tuple[int, int, str]], list[tuple[int, int, str]]]] = {}
    for signal in comparison.introduced:
        pair = texts.get(signal.path)
        if signal.source != "ruff" or pair is None:
            introduced.append(signal)
            continue
        if signal.path not in functions:
            functions[signal.path] = (_functions(pair[0]), _functions(pair[1]))
        old_functions, new_functions = functions[signal.path]
        where = _position(new_functions, signal.line)
        partner = next(
            (
                index
                for index, gone in enumerate(fixed)
                if gone.source == "ruff"
                and gone.path == signal.path
                and gone.code == signal.code
                and (
                    _rewritten(gone, signal, edits.get(signal.path, ()))
                    or (where is not None and _position(old_functions, gone.line) == where)
                )
            ),
            None,
        )
        if partner is None:
            introduced.append(signal)
        else:
            existing.append(signal)
            del fixed[partner]
    return Comparison(tuple(introduced), tuple(existing), tuple(fixed), comparison.statuses)
