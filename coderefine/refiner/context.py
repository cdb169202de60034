"""What of each file a request shows: whole files when they are small; for a large module, the parts the
change touches and a map of the rest, so that tokens per call grow with the change, not with the file.

The parts of a large module are: the definitions that hold a changed line, a signal or a line of a failing
test's traceback (whole, with a few surrounding lines); the module's other functions that those call
(callees) or that call them (callers), when short; and the module's header (its imports). Everything else
appears in an outline of signatures with their line numbers. Excerpts are verbatim lines, so an edit block
copied from them applies exactly to the whole file.
"""

from __future__ import annotations

import ast
import difflib
import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from coderefine.project.textfile import source_lines
from coderefine.pyast import parse_module
from coderefine.refiner.frames import crashed, innermost_frames, signal_lines
from coderefine.refiner.outline import FORMS, Definition, Form, definitions_of, outline_of
from coderefine.signals.base import Signal

SURROUND = 6  # lines shown before and after each focused definition
WINDOW = 30  # lines each side of a focus line outside any definition, or in a very long one
LONG_DEFINITION = 250  # a definition longer than this is shown as a window, not whole
NEIGHBOUR_LINES = 60  # callers and callees are shown whole only up to this length
MAX_NEIGHBOURS = 8
MOSTLY = 0.6  # when excerpts would cover more of the file than this, the whole file is sent
HEADER_LINES = 80  # the module header (docstring, imports) is shown up to this line

Span = tuple[int, int]  # 1-based, inclusive


@dataclass(frozen=True)
class FileView:
    """One file as a request shows it: whole (no excerpts), or excerpts and an outline of the rest."""

    path: str
    text: str
    excerpts: tuple[Span, ...] = ()
    outline: str = ""

    @property
    def whole(self) -> bool:
        return not self.excerpts

    def shows(self, start: int, end: int) -> bool:
        return self.whole or any(a <= start and end <= b for a, b in self.excerpts)

    def excerpt_text(self, span: Span) -> str:
        lines = source_lines(self.text)
        return "".join(lines[span[0] - 1 : span[1]])

    def describe(self) -> str:
        return ", ".join(f"{a}-{b}" for a, b in self.excerpts)

    @property
    def shown_chars(self) -> int:
        """The characters a request spends on this view: the file, or its excerpts and outline."""
        if self.whole:
            return len(self.text)
        return sum(len(self.excerpt_text(span)) for span in self.excerpts) + len(self.outline)


def changed_lines(before: str, after: str) -> set[int]:
    """Lines of ``after`` (1-based) that differ from ``before``; a deletion marks the line at its place."""
    old, new = ([line.rstrip("\r\n") for line in source_lines(text)] for text in (before, after))
    lines: set[int] = set()
    matcher = difflib.SequenceMatcher(None, old, new)
    for op, _i1, _i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        if j2 > j1:
            lines.update(range(j1 + 1, j2 + 1))
        else:
            lines.add(min(j1 + 1, max(len(new), 1)))
    return lines


def _union(*parts: Mapping[str, Iterable[int]]) -> dict[str, frozenset[int]]:
    paths = {path for part in parts for path in part}
    return {path: frozenset(n for part in parts for n in part.get(path, ())) for path in paths}


def _merge(spans: Iterable[Span]) -> tuple[Span, ...]:
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return tuple((a, b) for a, b in merged)


def _innermost(definitions: Sequence[Definition], line: int) -> Definition | None:
    holding = [d for d in definitions if d.start <= line <= d.end]
    # A method's class can be long: the method is the unit; a class is shown whole only when short.
    functions = [d for d in holding if not d.signature.lstrip().startswith("class ")]
    chosen = functions or [d for d in holding if d.end - d.start < LONG_DEFINITION]
    return max(chosen, key=lambda d: d.depth) if chosen else None


def _header_end(module: ast.Module) -> int:
    """The last line of the module's docstring and imports before its first definition (the imports
    tell the reviser which names it may use), at most ``HEADER_LINES``."""
    end = 0
    for node in module.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            break
        docstring = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        if docstring or isinstance(node, ast.Import | ast.ImportFrom):
            end = node.end_lineno or node.lineno
    return min(end, HEADER_LINES)


def view_of(
    path: str,
    text: str,
    focus: Iterable[int],
    threshold: int,
    tight: bool = False,
    plain: Iterable[int] = (),
) -> FileView:
    """``text`` whole when it has at most ``threshold`` lines (0: always whole) or nothing to focus
    on; else the focused excerpts and an outline of the definitions they leave out. ``tight``: excerpts
    even when they would cover most of the file or nothing is in focus (a request that must fit its view
    budget: then the header and the outline). ``plain``: lines whose definitions are shown whole without
    their callers and callees (where the failing tests point: each is a candidate, not a change)."""
    total = text.count("\n") + (0 if text.endswith("\n") else 1)
    alone = set(plain)
    wanted = sorted(n for n in set(focus) | alone if 1 <= n <= total)
    if threshold <= 0 or total <= threshold or not (wanted or tight):
        return FileView(path, text)
    try:
        module = parse_module(text)
    except (SyntaxError, ValueError):
        module = ast.Module(body=[], type_ignores=[])
    definitions = definitions_of(module)
    spans: list[Span] = []
    focused: dict[str, Definition] = {}
    for line in wanted:
        definition = _innermost(definitions, line)
        if definition is None or definition.end - definition.start >= LONG_DEFINITION:
            spans.append((line - WINDOW, line + WINDOW))
        else:
            if line not in alone:
                focused[f"{definition.start}"] = definition
            spans.append((definition.start - SURROUND, definition.end + SURROUND))
    names = {d.name for d in focused.values()}
    neighbours = [
        d
        for d in definitions
        if f"{d.start}" not in focused
        and d.end - d.start < NEIGHBOUR_LINES
        and (d.name in {c for f in focused.values() for c in f.calls} or names & d.calls)
    ]
    spans.extend((d.start, d.end) for d in neighbours[:MAX_NEIGHBOURS])
    # The header, at least the first line: a view with nothing to focus on is its header and outline.
    spans.append((1, max(1, _header_end(module))))
    excerpts = _merge((max(a, 1), min(b, total)) for a, b in spans if min(b, total) >= max(a, 1))
    if not tight and sum(b - a + 1 for a, b in excerpts) > total * MOSTLY:
        return FileView(path, text)  # a change all over the file: excerpts would cost more than it
    view = FileView(path, text, excerpts)
    hidden = [d for d in definitions if not view.shows(d.start, d.end)]
    return FileView(path, text, excerpts, outline_of(hidden))


def views_for(
    texts: Mapping[str, str],
    before: Mapping[str, str],
    signals: Iterable[Signal],
    threshold: int,
    extra: Mapping[str, Iterable[int]] | None = None,
    tight: bool = False,
    plain: Mapping[str, Iterable[int]] | None = None,
) -> dict[str, FileView]:
    """A view of each file, focused on its changed lines, the lines signals point at, and ``extra``
    (``tight``, ``plain``: see ``view_of``)."""
    chosen = tuple(signals)
    views: dict[str, FileView] = {}
    for path, text in texts.items():
        focus = signal_lines(path, chosen) | set((extra or {}).get(path, ()))
        if path in before:
            focus |= changed_lines(before[path], text)
        views[path] = view_of(path, text, focus, threshold, tight, (plain or {}).get(path, ()))
    return views


# The map of what a view leaves out takes at most this fraction of the code budget: it is there to name
# what to ask for, and the code the evidence points at is what the model edits.
OUTLINE_SHARE = 4


def fit_views(
    views: dict[str, FileView],
    texts: Mapping[str, str],
    before: Mapping[str, str],
    signals: Sequence[Signal],
    rewritten: Mapping[str, Iterable[int]],
    called: Mapping[str, Iterable[int]],
    budget_chars: int,
    located: Mapping[str, Iterable[int]] | None = None,
) -> dict[str, FileView]:
    """``views`` when they fit ``budget_chars``; else excerpts (even of a file under ``context-lines``,
    even covering most of it) around the changed and ``rewritten`` lines, the signals (not info) and the
    definitions the failing tests call (``called``), else with only the best of those (the best
    suspects, ``located``, and when every failing test crashed in the code under review, its innermost
    frames), else with only the errors among the signals (after a crash: then with only the best, then
    with no signal, then the frames with the change alone), else with no signal, else the change and the
    best suspects alone; the smallest when none fits. A small local model's
    8k tokens refused a 900-line module sent whole."""

    def size(candidate: Mapping[str, FileView]) -> int:
        return sum(v.shown_chars for v in candidate.values())

    views = mapped(views, budget_chars // OUTLINE_SHARE)
    if size(views) <= budget_chars:
        return views
    own = {p: frozenset(lines) for p, lines in rewritten.items()}
    focus = {p: own.get(p, frozenset()) | frozenset(called.get(p, ())) for p in {*own, *called}}
    # Formatting and other info-level signals can be all over a file: they do not earn a place here.
    weighty = [s for s in signals if s.severity != "info"]
    # Lint all over a module (a whole file's old warnings) can take the budget by itself: then only
    # the errors (failing tests, syntax) focus the views, then nothing but the change and the tests'
    # definitions. A release of more-itertools' 4,980-line more.py was sent at 11.6k tokens of views.
    errors = [s for s in signals if s.severity == "error"]
    # Every failing test's traceback passes through the code under review: where it passed is evidence
    # as strong as the suspects ranked by which tests run them (five suspects of pyflakes 3.0.1's
    # release, ranked against the four passing tests of one class, hid the three frames the fix is in;
    # with the suspects tied, a view of the header and one named method was chosen, the frames left
    # out). The entry frames (a dispatcher's loop) say least; the innermost, where it raised, most.
    deep = innermost_frames(texts, errors) if located and crashed(texts, errors) else {}
    # The change's own lines and the best suspects by rank: what no candidate but the last drops. Without
    # them a candidate of the signals alone held nothing when the tests failed at their own asserts
    # (more-itertools, two bugs: the header and an outline were chosen, both bugs hidden).
    ranked = _union(own, located or {})
    best = _union(ranked, deep)
    candidates = [views, views_for(texts, before, weighty, 1, focus, tight=True)]
    candidates.append(views_for(texts, before, weighty, 1, best, tight=True))
    candidates.append(views_for(texts, before, errors, 1, focus, tight=True))
    if deep:
        candidates.append(views_for(texts, before, errors, 1, best, tight=True))
        candidates.append(views_for(texts, before, (), 1, best, tight=True))
        candidates.append(views_for(texts, before, (), 1, _union(own, deep), tight=True))
        # The frames' and the suspects' definitions alone, without the helpers they call: pyflakes
        # 3.0.1's frames with their neighbours passed the budget, and the header with one suspect was
        # sent with two thirds of the budget unused.
        candidates.append(views_for(texts, before, (), 1, own, tight=True, plain=best))
    candidates.append(views_for(texts, before, (), 1, focus, tight=True))
    if located:
        # When every definition the failing tests call is too much (a release whose tests call a hundred
        # definitions of pyparsing's 6,227-line core.py, their tracebacks ending all over it), the best
        # suspects by rank and the change's own lines: a choice among the evidence, not the change alone
        # (which hid a second and third bug, `localized` 7 of 8 -> 3 of 8 on more-itertools).
        candidates.append(views_for(texts, before, (), 1, ranked, tight=True))
    # Each with its outline in the fullest form that fits before the next drops code from focus: the
    # map of a long module can cost more than the code the evidence points at.
    tried = [
        (form, {p: folded(v, form) for p, v in c.items()})
        for c in candidates
        for form in FORMS[FORMS.index(map_form(c, budget_chars // OUTLINE_SHARE)) :]
    ]
    fitting = [(form, c) for form, c in tried if size(c) <= budget_chars]
    form, chosen = fitting[0] if fitting else min(tried, key=lambda pair: size(pair[1]))
    return filled(chosen, budget_chars - size(chosen), form)


def map_form(views: Mapping[str, FileView], room: int) -> Form:
    """The fullest outline form in which the outlines of ``views`` take at most ``room`` characters
    together (the shortest when none does)."""
    for form in FORMS:
        if sum(len(folded(v, form).outline) for v in views.values()) <= room:
            return form
    return FORMS[-1]


def mapped(views: Mapping[str, FileView], room: int) -> dict[str, FileView]:
    """``views`` with their outlines in the fullest form that keeps them within ``room`` characters."""
    if not any(v.outline for v in views.values()):
        return dict(views)
    form = map_form(views, room)
    return {p: folded(v, form) for p, v in views.items()}


def folded(view: FileView, form: Form) -> FileView:
    """``view`` with its outline in ``form`` (``outline.py``)."""
    if view.whole or not view.outline or form == "signatures":
        return view
    try:
        definitions = module_definitions(view.text)
    except (SyntaxError, ValueError):
        return view
    hidden = [d for d in definitions if not view.shows(d.start, d.end)]
    return FileView(view.path, view.text, view.excerpts, outline_of(hidden, form))


@functools.lru_cache(maxsize=16)
def module_definitions(text: str) -> tuple[Definition, ...]:
    """The definitions of the module ``text``, parsed once: a view is folded in every outline form for
    every candidate, and a 5,000-line module takes tens of milliseconds to parse."""
    return tuple(definitions_of(parse_module(text)))


def filled(views: Mapping[str, FileView], room: int, form: Form = "signatures") -> dict[str, FileView]:
    """``views`` where a file with nothing in focus (its header and outline alone: no change, signal or
    failing test points into it) also shows its first definitions, whole and in order, as far as
    ``room`` characters go: a review against the intent alone still reads code, not only signatures. The
    outline of the rest keeps ``form``."""
    result = dict(views)
    for path, view in views.items():
        if view.whole or len(view.excerpts) != 1 or view.excerpts[0][0] != 1 or room <= 0:
            continue
        try:
            module = parse_module(view.text)
        except (SyntaxError, ValueError):
            continue
        lines = source_lines(view.text)
        end = view.excerpts[0][1]
        for node in module.body:
            last = node.end_lineno or node.lineno
            if last <= end:
                continue
            cost = sum(len(line) for line in lines[end:last])
            if cost > room:
                break
            room -= cost
            end = last
        if end > view.excerpts[0][1]:
            grown = FileView(path, view.text, ((1, end),))
            hidden = [d for d in definitions_of(module) if not grown.shows(d.start, d.end)]
            outline = outline_of(hidden, form)
            result[path] = (
                FileView(path, view.text, ((1, end),), outline) if hidden else FileView(path, view.text)
            )
    return result


# What a model writing edits in each format must take from a file shown in part.
PARTIAL_RULE = {
    "search-replace": "a SEARCH must copy lines from these parts exactly",
    "definition": "write only definitions shown here, each complete, or new ones",
    "whole": "write every line of each file",
}


def unseen_note(views: Mapping[str, FileView], edit_format: str = "search-replace") -> str:
    """What an edit-error message adds when a file was shown only in part."""
    partial = [v for v in views.values() if not v.whole]
    if not partial:
        return ""
    shown = "; ".join(f"{v.path}: lines {v.describe()}" for v in partial)
    return (
        f"Only parts of the files were shown to you ({shown}); {PARTIAL_RULE[edit_format]}, taking the "
        "excerpts added to this message as shown too."
    )


def named_spans(view: FileView, reply: str) -> list[Span]:
    """The spans of definitions that ``reply`` names (``def name``/``class name``) but ``view`` hides:
    what a reviser that tried to edit an unseen definition needs to see."""
    if view.whole:
        return []
    try:
        definitions = definitions_of(parse_module(view.text))
    except (SyntaxError, ValueError):
        return []
    return [
        (d.start, d.end)
        for d in definitions
        if not view.shows(d.start, d.end)
        and d.end - d.start < LONG_DEFINITION
        and re.search(rf"\b(?:def|class)\s+{re.escape(d.name)}\b", reply)
    ]
