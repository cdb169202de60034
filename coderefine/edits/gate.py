"""The patch gate: nothing reaches a user's file unless it passes here.

A candidate passes when every changed file is one under review (no absolute path, no ``..``, nothing
in ``.git``, no symlink leading outside the project) and parses with libcst and compiles with CPython.
The gate also names the functions and classes the candidate changed.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import threading
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from coderefine.edits.symbols import changed_symbols
from coderefine.signals.base import Signal
from coderefine.signals.syntax import compile_error, parse_error


@dataclass(frozen=True)
class GateResult:
    ok: bool
    problems: tuple[str, ...]
    syntax: tuple[Signal, ...]
    changed: tuple[str, ...]  # "path::Qualified.name"

    def feedback(self) -> str:
        return "\n".join(self.problems)


def prepare_gate() -> None:
    """Import libcst, which the gate parses every candidate with, in a background thread now: a run
    starts it before its first signals, whose tests leave this process waiting, so the tenth of a second
    of the import is off the path to the first write. Idempotent; an import that fails fails again, with
    its message, at the gate."""
    if "libcst" not in sys.modules:
        thread = threading.Thread(
            target=_import_quietly, args=("libcst",), name="coderefine-gate", daemon=True
        )
        thread.start()


def _import_quietly(name: str) -> None:
    with contextlib.suppress(Exception):  # the gate imports it again and reports the failure
        importlib.import_module(name)


def path_problem(rel: str, root: Path, allowed: Collection[str]) -> str | None:
    """Why ``rel`` may not be written, or None when it may."""
    pure = PurePosixPath(rel)
    if pure.is_absolute() or rel.startswith("\\") or (len(rel) > 1 and rel[1] == ":"):
        return f"{rel}: an absolute path; name files relative to the project"
    if ".." in pure.parts:
        return f"{rel}: leads outside the project ('..')"
    if pure.parts and pure.parts[0] == ".git":
        return f"{rel}: inside .git; coderefine never writes git's own files"
    if rel not in allowed:
        return f"{rel}: not under review; only these may change: {', '.join(sorted(allowed))}"
    resolved_root = root.resolve()
    try:
        (root / rel).resolve().relative_to(resolved_root)
    except ValueError:
        return f"{rel}: a symlink that leads outside the project"
    return None


def run_gate(
    candidate: Mapping[str, str],
    before: Mapping[str, str],
    *,
    root: Path,
    allowed: Collection[str],
    on_runnable: Callable[[], object] | None = None,
) -> GateResult:
    """Check every file of ``candidate`` (path -> new text) against ``before`` (path -> old text).

    ``on_runnable`` is called once every path is allowed and every file compiles, before libcst's
    parse and the names of the changed symbols: what can run may start its tests while the rest of the
    gate is checked (a candidate the gate then refuses is never accepted, whatever its tests say)."""
    problems: list[str] = []
    syntax: list[Signal] = []
    checked: list[str] = []
    for path, text in candidate.items():
        problem = path_problem(path, root, allowed)
        if problem:
            problems.append(problem)
            continue
        if before.get(path, "").strip() and not text.strip():
            problems.append(f"{path}: the edit would delete the whole file; change only what must change")
            continue
        if path.endswith((".py", ".pyi")) and _refused(path, compile_error(path, text), syntax, problems):
            continue
        checked.append(path)
    if not problems and on_runnable is not None:
        on_runnable()
    changed: list[str] = []
    for path in checked:
        text = candidate[path]
        if path.endswith((".py", ".pyi")) and _refused(path, parse_error(path, text), syntax, problems):
            continue
        changed.extend(f"{path}::{name}" for name in changed_symbols(before.get(path, ""), text))
    return GateResult(not problems, tuple(problems), tuple(syntax), tuple(changed))


def _refused(path: str, error: Signal | None, syntax: list[Signal], problems: list[str]) -> bool:
    if error is None:
        return False
    syntax.append(error)
    problems.append(f"{path}:{error.line}:{error.column}: {error.message} (near: {error.anchor!r})")
    return True
