"""The spec a change is judged by, for the requests: the source of the tests that fail, within a budget.

The failing tests are taken round-robin over the groups they fail in (``failures.group_failures``), so a
flood in one helper does not crowd out a test that fails elsewhere, each test function once (every case
of a parametrized test is one function). Their pieces (``test_source``) are then cut to the budget, the
largest piece first, a unit at a time (cases past the first two, then statements from the end, then the
rest), so no statement is ever cut in half; a piece with nothing left to cut is dropped whole. A line
says what was cut, and which failing tests' source is not shown.

A test that does not fail is not shown. The bench's hidden tests never reach a request: they are not in
the task's project, which is all that is read.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from coderefine.pyast import parse_module
from coderefine.signals.base import Signal
from coderefine.signals.failures import group_failures, innermost, split_locals
from coderefine.signals.test_piece import Piece, Unit, names_called
from coderefine.signals.test_source import TestSources, function_of

SPEC_TOKENS = 1_200  # the default budget of the spec section (setting ``spec-tokens``)
CHARS_PER_TOKEN = 4
MAX_TESTS = 12
FENCE = 90  # the characters of a piece's data markers and label, besides its path and name
OVERSUBSCRIBE = 2  # tests are taken while their full source is within twice the budget, then cut
CUT = "# ... {count} more line{s} cut to keep this request short"
HEADING = (
    "The source of the failing tests, with the fixtures and helpers they use (what they check is the "
    "specification the code must meet; the tests are not yours to edit unless they are among the files "
    "you may edit):"
)


@dataclass(frozen=True)
class Spec:
    """The pieces shown (cut to the budget), and what was left out."""

    pieces: tuple[Piece, ...]
    cut_lines: int
    dropped: tuple[str, ...]  # pieces dropped whole, as path::name
    unshown: tuple[str, ...]  # failing test functions whose source is not shown at all
    reached: tuple[str, ...]  # lines of the code under review that the failing tests reach


def failing_tests(signals: Iterable[Signal]) -> list[str]:
    """The node ids of the failing tests among ``signals``, round-robin over the groups they fail in,
    one per test function."""
    tests = [
        s for s in signals if s.source == "pytest" and "::" in s.code and not s.code.startswith("collect:")
    ]
    groups = [list(g.members) for g in group_failures(tests)]
    order: list[str] = []
    seen: set[tuple[str, tuple[str, ...]]] = set()
    rank = 0
    while any(rank < len(g) for g in groups):
        for group in groups:
            if rank < len(group):
                key = function_of(group[rank].code)
                if key not in seen:
                    seen.add(key)
                    order.append(group[rank].code)
        rank += 1
    return order


def build_spec(
    nodeids: Sequence[str],
    sources: TestSources,
    budget_chars: int,
    code: Mapping[str, str],
    signals: Sequence[Signal] = (),
) -> Spec:
    """The pieces of ``nodeids``' tests within about ``budget_chars`` (0: no limit); ``code``, the files
    under review, says what of it the tests reach (names they use, the frames of their failures)."""
    chosen: list[Piece] = []
    keys: set[tuple[str, str]] = set()
    unshown: list[str] = []
    full = 0
    for nodeid in nodeids:
        path, names = function_of(nodeid)
        if path in code:
            continue  # a test file under review is in the request already
        label = "::".join((path, *names))
        full_up = budget_chars and chosen and full > OVERSUBSCRIBE * budget_chars
        if full_up or len({p.name for p in chosen if p.kind == "test"}) >= MAX_TESTS:
            unshown.append(label)  # not even read: hundreds of failing tests cost no parsing
            continue
        pieces = [p for p in sources.pieces(nodeid) if p.path not in code]
        fresh = [p for p in pieces if (p.path, p.name) not in keys]
        size = sum(len(p.text) for p in fresh)
        over = budget_chars and chosen and full + size > OVERSUBSCRIBE * budget_chars
        if not pieces or over:
            unshown.append(label)
            continue
        full += size
        chosen.extend(fresh)
        keys.update((p.path, p.name) for p in fresh)
    shown, cut, dropped = fit(chosen, budget_chars)
    tests = {f"{p.path}::{p.name}" for p in chosen if p.kind == "test"}
    helpers = tuple(d for d in dropped if d not in tests)
    unshown.extend(d for d in dropped if d in tests)
    return Spec(tuple(shown), cut, helpers, tuple(unshown), reached_lines(code, chosen, signals))


def fit(pieces: Sequence[Piece], budget: int) -> tuple[list[Piece], int, list[str]]:
    """``pieces`` cut to about ``budget`` characters: the pieces kept (in their order), the lines cut,
    and the pieces dropped whole (``path::name``). Each cut takes a unit from the largest piece that
    still has one; only when nothing is left to cut are pieces dropped, helpers before tests, the
    largest first, the first test last."""
    live: list[list[Unit | None]] = [list(p.units) for p in pieces]
    alive = [True] * len(pieces)

    def size(i: int) -> int:
        # The fence around each piece counts too: a dozen short tests spend a tenth of it on labels.
        return len(_render(pieces[i], live[i]).text) + FENCE + len(pieces[i].path) + len(pieces[i].name)

    sizes = [size(i) for i in range(len(pieces))]
    total = sum(sizes)
    while budget and total > budget:
        cuttable = [i for i in range(len(pieces)) if alive[i] and _next_cut(live[i]) is not None]
        if cuttable:
            largest = max(cuttable, key=lambda i: sizes[i])
            live[largest][_next_cut(live[largest]) or 0] = None
            new = size(largest)
            total += new - sizes[largest]
            sizes[largest] = new
            continue
        left = [i for i in range(len(pieces)) if alive[i]]
        if not left:
            break
        # The last piece goes too when even cut as far as it goes it is over the budget (a statement
        # of thousands of cases): the budget protects a small model's context, and the test is named.
        victim = max(left, key=lambda i: (pieces[i].kind != "test", i > left[0], sizes[i]))
        alive[victim] = False
        total -= sizes[victim]
    shown = [_render(pieces[i], live[i]) for i in range(len(pieces)) if alive[i]]
    cut = sum(
        u.text.count("\n")
        for i in range(len(pieces))
        if alive[i]
        for u, kept in zip(pieces[i].units, live[i], strict=True)
        if kept is None
    )
    dropped = [f"{p.path}::{p.name}" for i, p in enumerate(pieces) if not alive[i]]
    return shown, cut, dropped


def _next_cut(units: Sequence[Unit | None]) -> int | None:
    """The unit to cut next: the lowest rank, the last of it. A unit shorter than the line that would
    replace it is cut only beside a unit cut or cuttable (the cuts of a run share one line): alone,
    cutting it would save nothing."""

    def joins(j: int) -> bool:
        if not 0 <= j < len(units):
            return False
        neighbour = units[j]
        return neighbour is None or neighbour.rank is not None

    def saves(i: int) -> bool:
        unit = units[i]
        return unit is not None and (len(unit.text) > len(CUT) + 8 or joins(i - 1) or joins(i + 1))

    ranked = [(u.rank, -i) for i, u in enumerate(units) if u is not None and u.rank is not None and saves(i)]
    if not ranked:
        return None
    _, neg = min(ranked)
    return -neg


def _render(piece: Piece, units: Sequence[Unit | None]) -> Piece:
    """``piece`` with each run of cut units as one comment line, indented like its first line."""
    out: list[Unit] = []
    run: list[Unit] = []

    def close() -> None:
        if run:
            count = sum(u.text.count("\n") for u in run)
            first = run[0].text
            indent = first[: len(first) - len(first.lstrip())]
            # Statements cut from a body leave ``...``: a body cut to nothing must still be Python.
            placeholder = "...  " if all(u.rank == 1 for u in run) else ""
            note = CUT.format(count=count, s="s" if count != 1 else "")
            out.append(Unit(f"{indent}{placeholder}{note}\n", None))
            run.clear()

    for original, kept in zip(piece.units, units, strict=True):
        if kept is None:
            run.append(original)
        else:
            close()
            out.append(kept)
    close()
    return replace(piece, units=tuple(out))


def reached_lines(
    code: Mapping[str, str], pieces: Sequence[Piece], signals: Sequence[Signal]
) -> tuple[str, ...]:
    """What of the files under review the failing tests reach: the definitions their text names (by
    name or attribute) and the lines their failures' tracebacks pass through, one line a file."""
    used = names_called(pieces)
    frames: dict[str, set[int]] = {}
    for signal in signals:
        if signal.source != "pytest":
            continue
        for row in split_locals(signal.detail)[0].splitlines():
            where = innermost(row)
            path, _, line = where.rpartition(":")
            if path in code and line.isdigit():
                frames.setdefault(path, set()).add(int(line))
    notes: list[str] = []
    for path, text in code.items():
        modules = module_names(path)
        called = [d for d in _definitions(text) if used.reaches(d.name, d.owner, modules)]
        parts = [f"`{d.name}` (lines {d.start}-{d.end})" for d in called[:12]]
        if path in frames:
            parts.append(
                "their failures pass through line"
                + ("s " if len(frames[path]) > 1 else " ")
                + ", ".join(map(str, sorted(frames[path])[:12]))
            )
        if parts:
            notes.append(f"{path}: " + "; ".join(parts))
    return tuple(notes)


def definition_lines(code: Mapping[str, str], spec: Spec) -> dict[str, set[int]]:
    """The first lines of the definitions the spec's tests call, to keep in a partial view's focus."""
    used = names_called(spec.pieces)
    return {
        path: {d.start for d in _definitions(text) if used.reaches(d.name, d.owner, module_names(path))}
        for path, text in code.items()
    }


@dataclass(frozen=True)
class Definition:
    name: str
    owner: str | None  # the class of a method; None at the top level
    start: int
    end: int


def module_names(path: str) -> tuple[str, ...]:
    """The names a test may import ``path``'s module by: its stem and its package folders
    (``src/pkg/sub/mod.py``: mod, sub, pkg, src; ``lib/__init__.py``: lib). A folder that is no package
    (src) costs nothing: no test calls ``src.get``."""
    parts = [p for p in path.replace("\\", "/").split("/")[:-1] if p not in ("", ".")]
    stem = path.replace("\\", "/").rsplit("/", 1)[-1].removesuffix(".py")
    return tuple(dict.fromkeys([*([stem] if stem != "__init__" else []), *reversed(parts)]))


def _definitions(text: str) -> list[Definition]:
    """The top-level functions and classes of ``text`` and the methods of its classes."""
    try:
        tree = parse_module(text)
    except (SyntaxError, ValueError):
        return []
    found: list[Definition] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.append(Definition(node.name, None, node.lineno, node.end_lineno or node.lineno))
        if isinstance(node, ast.ClassDef):
            for child in node.body:
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) and not child.name.startswith(
                    "__"
                ):
                    found.append(
                        Definition(child.name, node.name, child.lineno, child.end_lineno or child.lineno)
                    )
    return found


def section(spec: Spec, fence: Callable[[str, str, str], str]) -> str:
    """The spec as a request's section ("" when there is nothing to say)."""
    if not spec.pieces and not spec.unshown and not spec.reached:
        return ""
    parts = [HEADING] if spec.pieces else []
    for piece in spec.pieces:
        label = f"path={piece.path} name={piece.name} lines={piece.start}-{piece.end}"
        parts.append(fence(piece.kind, piece.text, label))
    notes = []
    if spec.cut_lines:
        notes.append(
            f"{spec.cut_lines} lines of this test source were cut to fit (the largest pieces first)."
        )
    if spec.dropped:
        notes.append("Not shown, to keep this request short: " + ", ".join(spec.dropped) + ".")
    if spec.unshown:
        listed = ", ".join(spec.unshown[:8])
        more = f" and {len(spec.unshown) - 8} more" if len(spec.unshown) > 8 else ""
        notes.append(
            f"Failing tests whose source is not shown (over the budget, or not found): {listed}{more}."
        )
    if notes:
        parts.append(" ".join(notes))
    if spec.reached:
        parts.append(
            "The code under review that the failing tests reach:\n"
            + "\n".join(f"- {r}" for r in spec.reached)
        )
    return "\n\n".join(parts)


def project_reader(root: Path, texts: Mapping[str, str]) -> Callable[[str], str | None]:
    """A reader of the project's files by relative path: the texts under review first, then the disk
    (never outside ``root``)."""
    resolved = root.resolve()

    def read(path: str) -> str | None:
        if path in texts:
            return texts[path]
        target = (root / path).resolve()
        if not target.is_relative_to(resolved) or not target.is_file():
            return None
        try:
            return target.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    return read


class SpecSource:
    """The spec section of each request: the failing tests among a version's signals, or, for an
    author that is shown no signals (the bench's one-shot), the tests it was given; within
    ``budget_chars`` (0: no limit)."""

    def __init__(self, sources: TestSources, budget_chars: int, tests: Sequence[str] = ()) -> None:
        self._sources = sources
        self._budget = budget_chars
        self._tests = tuple(tests)

    def spec(
        self,
        code: Mapping[str, str],
        signals: Sequence[Signal],
        *,
        given: bool = False,
        budget_chars: int | None = None,
    ) -> Spec:
        """``budget_chars``: this request's share, when a request's total cuts it below the setting's."""
        tests = failing_tests(signals)
        if not tests and given:
            tests = list(self._tests)
        budget = self._budget if budget_chars is None else max(1, budget_chars)
        return build_spec(tests, self._sources, budget, code, signals)

    def section(
        self,
        code: Mapping[str, str],
        signals: Sequence[Signal],
        fence: Callable[[str, str, str], str],
        *,
        given: bool = False,
        budget_chars: int | None = None,
    ) -> str:
        return section(self.spec(code, signals, given=given, budget_chars=budget_chars), fence)

    def focus(
        self, code: Mapping[str, str], signals: Sequence[Signal], *, given: bool = False
    ) -> dict[str, set[int]]:
        """Lines of the files under review to keep in view: the definitions the failing tests call
        (``given``: with no failing test, those the spec source was given)."""
        tests = failing_tests(signals) or (list(self._tests) if given else [])
        return definition_lines(code, self.spec(code, signals, given=given)) if tests else {}
