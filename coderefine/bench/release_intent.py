"""A release task's intent: NEW's changelog items about the change, else what its visible failing tests
expect, in a user's words."""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from coderefine.bench.changelog import release_entry
from coderefine.bench.library import SuiteRun
from coderefine.bench.suite import differing_lines, test_function
from coderefine.pyast import parse_module

INTENT_CHARS = 700


def release_intent(
    tree: Path,
    version: str,
    texts: Mapping[str, tuple[str, str]],
    run: SuiteRun,
    visible: Sequence[str],
    *,
    piece: bool = False,
) -> tuple[str, str]:
    """The intent and its strength (``changelog`` or ``tests``) of a task whose files go from the first
    text of ``texts`` to the second. A whole change takes NEW's changelog items that name its modules
    (failing that, a changed definition; failing that, all); a ``piece`` of a larger change only the
    items that name one of its own definitions, else the tests' description: a file's items would tell
    each piece of it the whole file's change."""
    entry = release_entry(tree, version)
    where = ", ".join(texts)
    modules, definitions = _words(texts)
    if piece:
        names = [
            n
            for path, (old, new) in texts.items()
            for n in changed_definitions(new, differing_lines(old, new))
        ]
        where = f"{where} ({', '.join(f'`{n}`' for n in names[:4])})" if names else where
    if entry:
        named = [(i, set(re.findall(r"\w+", i.lower()))) for i in entry]
        by_definition = [i for i, w in named if w & definitions]
        items = by_definition if piece else [i for i, w in named if w & modules] or by_definition or entry
        if items:
            text = f"Make this change to {where}, from the project's changelog: " + " ".join(items)
            return cut(text), "changelog"
    described: list[tuple[str, str]] = []
    for nodeid in visible:
        name = test_function(nodeid).rsplit("::", 1)[-1]
        if name in {d[0] for d in described}:
            continue
        message = relative(run.message(nodeid), tree).replace("Use -v to get more diff", "")
        described.append((name, cut(message, 160)))
    parts = [f"`{n}` ({m})" if m else f"`{n}`" for n, m in described[:4]]
    text = (
        f"Users expect what these tests check, and the code in {where} does not do it yet: "
        + "; ".join(parts)
        + ". Change the code so that they pass, without changing the tests."
    )
    return cut(text), "tests"


def changed_definitions(text: str, lines: Sequence[int]) -> list[str]:
    """The innermost functions and classes of ``text`` that hold one of ``lines``, in order."""
    try:
        module = parse_module(text)
    except SyntaxError:
        return []
    spans: list[tuple[int, int, str]] = []

    def walk(nodes: Sequence[ast.stmt], prefix: str) -> None:
        for node in nodes:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                qualname = f"{prefix}{node.name}"
                spans.append((node.lineno, node.end_lineno or node.lineno, qualname))
                walk(node.body, f"{qualname}.")

    walk(module.body, "")
    found: list[str] = []
    for line in lines:
        holding = [s for s in spans if s[0] <= line <= s[1]]
        if holding:
            name = min(holding, key=lambda s: s[1] - s[0])[2]
            if name not in found:
                found.append(name)
    return found


def _words(texts: Mapping[str, tuple[str, str]]) -> tuple[set[str], set[str]]:
    """Lower-case names a changelog item about this change would mention: the files' module names (a
    package's ``__init__`` by its package's), and the changed definitions."""
    modules: set[str] = set()
    definitions: set[str] = set()
    for path, (old, new) in texts.items():
        for name in changed_definitions(new, differing_lines(old, new)):
            definitions.update(part.lower() for part in name.split("."))
        stem = Path(path).stem
        modules.add((Path(path).parent.name if stem == "__init__" else stem).lower())

    def kept(words: set[str]) -> set[str]:
        return {w for w in words if len(w) > 3 and not w.startswith("__")}

    return kept(modules), kept(definitions)


def relative(message: str, tree: Path) -> str:
    """``message`` with paths inside ``tree`` made relative and any other absolute path cut to its
    name, so that an intent says the same wherever the suite was built."""
    message = message.replace(str(tree) + "/", "").replace(str(tree), ".")
    return re.sub(r"(?<![\w.])/(?:[\w.@+-]+/)+([\w.@+-]+)", r"\1", message)


def cut(text: str, limit: int = INTENT_CHARS) -> str:
    """``text`` at most ``limit`` characters, cut at a word (never inside one), ending in "..."."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    head = text[: limit - 3]
    space = head.rfind(" ")
    return (head[:space] if space > 0 else head).rstrip(" ,;:") + "..."
