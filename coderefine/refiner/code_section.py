"""The code a request shows: the files under review whole or in excerpts with an outline, the lines a
critique names that the views leave out, and what a request says of files shown in part."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from coderefine.edits.symbols import symbols
from coderefine.models.base import Block
from coderefine.refiner.asks import HOW_TO_ASK
from coderefine.refiner.context import PARTIAL_RULE, FileView, Span, view_of
from coderefine.refiner.critique import Critique
from coderefine.refiner.sections import fence


def excerpt(view: FileView, span: Span) -> str:
    return fence("code", view.excerpt_text(span), f"path={view.path} lines={span[0]}-{span[1]}")


def code_block(
    files: Mapping[str, str], views: Mapping[str, FileView] | None = None, edit_format: str = "search-replace"
) -> Block:
    parts = ["The files under review, as they are now:"]
    for path, text in files.items():
        view = (views or {}).get(path)
        if view is None or view.whole:
            parts.append(f"{path}:\n" + fence("code", text, f"path={path}"))
            continue
        lines = text.count("\n")
        parts.append(
            f"{path} has {lines} lines, so only the parts this change touches are shown, verbatim, each "
            f"labelled with its line numbers; {PARTIAL_RULE[edit_format]}."
        )
        parts.extend(excerpt(view, span) for span in view.excerpts)
        if view.outline:
            parts.append(
                f"The other definitions of {path}, not shown (line: signature; or, folded to keep this "
                "request short, name:line):\n" + fence("outline", view.outline, f"path={path}")
            )
    return Block("\n\n".join(parts), cache=True)


def issue_excerpts(
    views: Mapping[str, FileView],
    critique: Critique,
    room: int | None = None,
    first: Sequence[int] = (),
) -> str:
    """Excerpts of the lines the critique refers to that the views leave out, for the reviser, within
    ``room`` characters (None: no limit), the issues of ``first`` (this call's) before the others; those
    past the room are named by their lines and definition, to ask for. Each line is shown once: what a
    view or an earlier issue's excerpt already shows is cut, and excerpts that meet are joined."""
    order = [*first, *(i for i in range(len(critique.issues)) if i not in first)]
    taken: dict[str, list[Span]] = {}
    left: list[str] = []
    used = 0
    for index in order:
        issue = critique.issues[index]
        view = views.get(issue.path)
        if view is None or view.whole:
            continue
        # Not only the issue's own lines: an issue anchored on a definition's first line (its evidence
        # quoted the `def` line) is about its body, which the view may leave out.
        wider = view_of(view.path, view.text, range(issue.line, (issue.end_line or issue.line) + 1), 1)
        spans = taken.setdefault(view.path, [])
        for wanted in wider.excerpts:
            for span in uncovered(wanted, [*view.excerpts, *spans]):
                size = len(excerpt(view, span))
                if room is not None and used + size > room:
                    left.append(_named(view, span, issue.line))
                    continue
                spans.append(span)
                used += size
    parts = [excerpt(views[path], span) for path, spans in taken.items() for span in joined(spans)]
    sections = []
    if parts:
        sections.append("Lines the critique refers to that are not shown above:\n\n" + "\n\n".join(parts))
    if left:
        sections.append(
            "Also referred to by the critique, not shown to keep this request short: "
            + "; ".join(dict.fromkeys(left))
            + ". "
            + HOW_TO_ASK
        )
    return "\n\n".join(sections)


def uncovered(span: Span, covered: Sequence[Span]) -> list[Span]:
    """The runs of lines of ``span`` that no span of ``covered`` holds."""
    runs: list[Span] = []
    start = span[0]
    for a, b in sorted(covered):
        if b < start or a > span[1]:
            continue
        if a > start:
            runs.append((start, a - 1))
        start = max(start, b + 1)
    if start <= span[1]:
        runs.append((start, span[1]))
    return runs


def joined(spans: Sequence[Span]) -> list[Span]:
    """``spans`` in line order, those that overlap or meet made one."""
    out: list[Span] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _named(view: FileView, span: Span, line: int) -> str:
    """``path lines a-b`` with the innermost definition that holds the issue's ``line``, by which to ask
    for it."""
    holders = [s for s in symbols(view.text) if s.line <= line <= s.end_line]
    where = f"{view.path} lines {span[0]}-{span[1]}"
    if not holders:
        return where
    return f"{where} (in `{max(holders, key=lambda s: s.line).name}`)"


def asks_note(views: Mapping[str, FileView] | None) -> str:
    """How to ask for code not shown, when some file is shown in part."""
    return HOW_TO_ASK if any(not v.whole for v in (views or {}).values()) else ""


def whole_note(whole: Sequence[str], views: Mapping[str, FileView]) -> str:
    """What the critic is told of the files under review whole (no version before the change): all of
    each file is under review; and of one shown in part, which parts are shown and how to see more."""
    if not whole:
        return ""
    note = (
        "Under review whole (no version before the change to compare with): "
        + ", ".join(whole)
        + "; all of each file is under review, not only some of its functions and classes."
    )
    partial = [views[p] for p in whole if p in views and not views[p].whole]
    if partial:
        shown = "; ".join(f"{v.path}: lines {v.describe()}" for v in partial)
        note += (
            f" Only parts are shown above ({shown}), chosen by the failing tests, the signals and the "
            "change; the outline lists the rest. An issue that names lines or a definition not shown "
            "brings them to the reviser."
        )
    return note


# Per edit format (edits/formats.py): the system prompt's section on writing edits, what the author and
# the reviser are asked to answer with, and the retry after an answer that could not be used.
