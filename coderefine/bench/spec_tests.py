"""``feature-tests`` tasks, the spec in the tests: a tested function's body and docstring removed, so that
the project's visible tests are all that says what it must do. Functions that never had a docstring
qualify too (most functions of some projects)."""

from __future__ import annotations

import ast
import random
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Protocol

from coderefine.bench.library import Coverage, SuiteRun
from coderefine.bench.mutate import function_text, remove_body, sites
from coderefine.bench.suite import Edit, LibraryTask
from coderefine.pyast import parse_module


class Builder(Protocol):
    """What of the suite's builder these tasks use (builder.py passes itself in)."""

    label: str
    rng: random.Random
    coverage: Coverage

    def failing(self, path: str, text: str) -> SuiteRun | None: ...
    def split(self, run: SuiteRun) -> tuple[tuple[str, ...], tuple[str, ...]]: ...
    def progress(self, message: str) -> None: ...


KIND = "feature-tests"


def spec_test_tasks(
    builder: Builder, name: str, texts: Mapping[str, str], taken: Sequence[LibraryTask], count: int
) -> list[LibraryTask]:
    """Up to ``count // 6`` tasks (at least one when ``count`` allows any), each a tested top-level
    function that no feature task of the suite took, whose removal a test notices. A one-line body counts:
    what it must compute is still only in the tests."""
    want = max(1, count // 6) if count >= 4 else 0
    used = {(t.path, t.function) for t in taken if t.kind == "feature"}
    candidates = [
        (path, info)
        for path, text in texts.items()
        for info in sites(text)[1]
        if (path, info.qualname) not in used
        and info.statements >= 1
        and "." not in info.qualname.strip("_")
        and (
            not builder.coverage
            or set(range(info.line + 1, info.end_line + 1)) & builder.coverage.lines_of(path)
        )
    ]
    builder.rng.shuffle(candidates)
    found: list[LibraryTask] = []
    for path, info in candidates:
        if len(found) >= want:
            break
        text = texts[path]
        changed = remove_body(text, info.qualname, keep_docstring=False)
        run = builder.failing(path, changed)
        if run is None or not run.failed():
            continue
        visible, hidden = builder.split(run)
        delta = len(changed.splitlines()) - len(text.splitlines())
        after = replace(info, end_line=info.end_line + delta)
        clean = function_text(text, info)
        found.append(
            LibraryTask(
                task_id=f"{name}/tests-{len(found):03d}",
                kind=KIND,
                shape=KIND,
                strength="tests",
                mutation="removed-body-and-docstring",
                path=path,
                function=info.qualname,
                line=info.line,
                intent=spec_intent(info.qualname, path, clean),
                edits=(Edit(clean, function_text(changed, after)),),
                visible=visible,
                hidden=hidden,
                module_lines=len(text.splitlines()),
            )
        )
        builder.progress(f"{builder.label}: feature-tests {len(found)}/{want} ({info.qualname})")
    return found


def spec_intent(function: str, path: str, clean: str) -> str:
    """What the user asks: the function, its file, the tests; with the signature when it is annotated
    (annotations are the signature's own, not a description)."""
    intent = f"Implement `{function}` in {path} so that the project's tests pass."
    signature = annotated_signature(clean)
    return f"{intent} Its signature: `{signature}`." if signature else intent


def annotated_signature(function: str) -> str:
    """``def name(x: int) -> str`` of the first definition in ``function`` when any of its parameters
    or its return is annotated; empty otherwise."""
    text = _dedent(function)
    try:
        module = parse_module(text)
    except SyntaxError:
        return ""
    node = next((n for n in module.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)), None)
    if node is None:
        return ""
    args = node.args
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    if node.returns is None and not any(a is not None and a.annotation is not None for a in every):
        return ""
    # As its author wrote it: the lines from ``def`` to the body, joined.
    lines = text.splitlines()[node.lineno - 1 : node.body[0].lineno - 1]
    written = " ".join(" ".join(lines).split()).removesuffix(":")
    written = written.replace("( ", "(").replace(", )", ")").replace(",)", ")")
    return written or ast.unparse(node).splitlines()[0].removesuffix(":")


def _dedent(text: str) -> str:
    lines = text.splitlines()
    indent = min((len(x) - len(x.lstrip()) for x in lines if x.strip()), default=0)
    return "\n".join(x[indent:] for x in lines) + "\n"
