"""What a run's requests show of the code: each file whole, or focused excerpts and an outline, chosen by
the change, the signals and where the failing tests point, within the run's code budget (``budget.py``).

The critic and the reviser of a round get the same views, so that they share one cached prefix; the
author's are bounded by the window alone. What the views leave of the code budget is the room for the
reviser's excerpts of the lines a critique names and for the definitions a model asks to see.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping

from coderefine.models.windows import DIFF_ALLOWANCE, FLOOR
from coderefine.refiner.budget import RequestBudget
from coderefine.refiner.context import OUTLINE_SHARE, FileView, fit_views, mapped, views_for
from coderefine.refiner.localize import Localization
from coderefine.refiner.spec import CHARS_PER_TOKEN, SpecSource
from coderefine.signals.base import Comparison, Signal, touched_lines


class Showing:
    """The views of one run's files. ``original``: the files as the run found them; ``before``: their
    versions before the change (none for a file under review whole); ``spec``: the failing tests'
    source, whose definitions a file shown in part keeps in view."""

    def __init__(
        self,
        *,
        original: Mapping[str, str],
        before: Mapping[str, str],
        intent: str,
        edit_format: str,
        context_lines: int,
        budget: RequestBudget,
        spec: SpecSource | None,
    ) -> None:
        self.original = original
        self.before = before
        self.intent = intent
        self.edit_format = edit_format
        self.context_lines = context_lines
        self.budget = budget
        self.spec = spec
        self.shown: dict[str, FileView] = {}
        # Where the failing tests point (``localize.py``): None until tests fail and their calls are known.
        self.localization: Localization | None = None

    def located(self, texts: Mapping[str, str], comparison: Comparison) -> dict[str, frozenset[int]]:
        """The lines of the definitions the failing tests point at, while tests still fail."""
        failing = any(is_test_failure(s) for s in comparison.introduced)
        return self.localization.lines(texts) if self.localization is not None and failing else {}

    def views(
        self, texts: Mapping[str, str], comparison: Comparison, diff: str | None = None
    ) -> dict[str, FileView]:
        """What the critic's and the reviser's requests show of each file (whole when small; see
        ``context``). The lines this run rewrote stay in focus too: a revision that undid the whole
        change leaves no diff and no signal, and the critic confirming it was shown all of a 2,700-line
        file. ``diff``: the change's diff when the caller has it already (else it is made here, to count
        against the budget)."""
        if self.edit_format == "whole":
            # The model answers with every line of each file: it must be shown every line.
            self.shown = {p: FileView(p, t) for p, t in texts.items()}
            return self.shown
        rewritten = {
            p: touched_lines(self.original[p], t)
            for p, t in texts.items()
            if p in self.original and t != self.original[p]
        }
        # The definitions the failing tests point at are shown whole (without their neighbours: each is
        # a candidate, not a change), beside the change's own lines, while tests fail.
        located = self.located(texts, comparison)
        focused: dict[str, Iterable[int]] = {p: set(rewritten.get(p, ())) for p in texts}
        views = views_for(
            texts, self.before, comparison.introduced, self.context_lines, focused, plain=located
        )
        partial = {p: t for p, t in texts.items() if not views[p].whole}
        if self.spec is not None and partial:
            # A file shown in part keeps in view the definitions the failing tests call: when the tests
            # are the spec, the code they exercise is what must change, wherever the traceback ends. A
            # file shown whole stays whole: focusing it on those definitions would hide the helpers
            # they reach, which the tests' text does not name.
            focus = {p: frozenset(lines) for p, lines in focused.items()}
            for path, lines in self.spec.focus(partial, comparison.introduced).items():
                focus[path] = focus.get(path, frozenset()) | lines
            views.update(
                views_for(
                    partial, self.before, comparison.introduced, self.context_lines, focus, plain=located
                )
            )
        # The critic's and the reviser's requests carry the intent and the diff beside the views.
        beside = len(self.intent) + len(change_diff(self.before, texts) if diff is None else diff)
        self.shown = self._fitted(views, texts, comparison, rewritten, self.budget.code_chars, beside)
        return self.shown

    def author_views(self, texts: Mapping[str, str], comparison: Comparison) -> dict[str, FileView] | None:
        """The author's views: None (every file whole), unless that would not fit the model's context
        (never in ``whole`` format, whose answer is every line of each file)."""
        whole = {p: FileView(p, t) for p, t in texts.items()}
        fitted = (
            whole
            if self.edit_format == "whole"
            else self._fitted(whole, texts, comparison, {}, self.budget.author_chars)
        )
        self.shown = fitted  # so that a retry says which parts the author was not shown
        return None if fitted == whole else fitted

    def code_room(self) -> int | None:
        """What the code budget leaves, after the views last shown, for the lines a critique names and
        the definitions a model asks for (None: no limit)."""
        return self.budget.code_room(sum(v.shown_chars for v in self.shown.values()))

    def _fitted(
        self,
        views: dict[str, FileView],
        texts: Mapping[str, str],
        comparison: Comparison,
        rewritten: Mapping[str, Iterable[int]],
        chars: int | None,
        beside: int = 0,
    ) -> dict[str, FileView]:
        """``views``, or excerpts that fit ``chars`` (None: no limit), beside the ``beside`` characters of
        intent and diff the request also holds."""
        if chars is None:
            return views
        over = max(0, beside - DIFF_ALLOWANCE * CHARS_PER_TOKEN)
        budget = max(FLOOR * CHARS_PER_TOKEN, chars - over)
        views = mapped(views, budget // OUTLINE_SHARE)
        if sum(v.shown_chars for v in views.values()) <= budget:
            return views
        # The author of a run without signals has nothing but the given tests to focus on.
        called: dict[str, Iterable[int]] = dict(
            self.spec.focus(texts, comparison.introduced, given=True) if self.spec is not None else {}
        )
        located = self.located(texts, comparison)
        for path, lines in located.items():
            called[path] = set(called.get(path, ())) | lines
        return fit_views(views, texts, self.before, comparison.introduced, rewritten, called, budget, located)


def is_test_failure(signal: Signal) -> bool:
    return signal.source == "pytest" and not signal.code.startswith("collect:")


def change_diff(before: Mapping[str, str], after: Mapping[str, str]) -> str:
    """The unified diff of each file of ``after`` that has a version in ``before``."""
    parts: list[str] = []
    for path, text in after.items():
        old = before.get(path)
        if old is None:
            continue
        parts.extend(
            difflib.unified_diff(
                old.splitlines(keepends=True), text.splitlines(keepends=True), f"a/{path}", f"b/{path}"
            )
        )
    return "".join(parts)
