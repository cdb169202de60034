"""One request's total: the sections that can be cut give way together when a request would pass it.

Each section of facts has a budget of its own (``budget.py``), and the code has one; their sum is what a
request could hold, and for the reviser it was above 6,000 tokens by construction (views 3,000, signals
1,500, the failing tests' source 1,200, the lines the critique names 1,000, and the critique itself).
``request-tokens`` is what a critic's or reviser's request aims at as a whole. The parts that cannot be
cut without losing the request's meaning are measured first: the system prompt and the views (the
cached prefix critic and reviser share, already sized by the code budget), the intent, the diff, the
critique. What they leave is shared by the sections that can be cut (the signals, the failing tests'
source, the lines a critique names): each is first rendered at its own budget; when together they do not
fit, each gets its floor, and the rest is split evenly, a section that needs less than its part leaving
the difference to the others (max-min fairness), so the largest is cut most and a short one not at all.

A floor is kept even when the total is passed: a signals section cut to nothing would read as "no
signal", and a reviser told of lines it was never shown has nothing to write its edit against.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

SectionText = str | Sequence[str]


@dataclass(frozen=True)
class Flexible:
    """A section that can be cut: ``render(None)`` is it at its own budget, ``render(chars)`` within
    about ``chars`` characters; ``floor``: the least it is cut to, in characters."""

    render: Callable[[int | None], SectionText]
    floor: int


def size(text: SectionText) -> int:
    return len(text) if isinstance(text, str) else sum(len(part) for part in text)


def allot(available: int, wants: Mapping[str, int], floors: Mapping[str, int]) -> dict[str, int]:
    """Each name's share of ``available`` characters: its whole want when all fit; otherwise its floor
    (or its want, if smaller), then an even split of what is left among those that want more, a name
    wanting less than its part leaving the rest to the others."""
    if sum(wants.values()) <= available:
        return dict(wants)
    shares = {name: min(want, floors.get(name, 0)) for name, want in wants.items()}
    left = available - sum(shares.values())
    # Smallest need first: each takes at most an even part of what is left, so what one does not need
    # goes to the ones after it.
    needs = sorted((want - shares[name], name) for name, want in wants.items() if want > shares[name])
    for index, (need, name) in enumerate(needs):
        if left <= 0:
            break
        part = min(need, left // (len(needs) - index))
        shares[name] += part
        left -= part
    return shares


def fit_sections(
    total: int | None, fixed_chars: int, fixed: Mapping[str, SectionText], flexible: Mapping[str, Flexible]
) -> dict[str, SectionText]:
    """``fixed`` and ``flexible``'s sections, the latter cut where ``fixed_chars`` (what the request
    holds outside its message: the system prompt and the views) and the fixed sections leave less than
    they take at their own budgets of ``total`` characters (None: no total)."""
    first = {name: section.render(None) for name, section in flexible.items()}
    if total is None:
        return {**fixed, **first}
    wants = {name: size(text) for name, text in first.items()}
    available = total - fixed_chars - sum(size(text) for text in fixed.values())
    if sum(wants.values()) <= available:
        return {**fixed, **first}
    shares = allot(max(0, available), wants, {name: s.floor for name, s in flexible.items()})
    cut = {
        name: first[name] if shares[name] >= wants[name] else _within(section, shares[name])
        for name, section in flexible.items()
    }
    return {**fixed, **cut}


def _within(section: Flexible, share: int) -> SectionText:
    """``section`` made within ``share`` characters. A renderer's budget bounds its own lines, and what
    it adds about a cut (how much was cut, the tests whose source is not shown) comes on top: tabulate's
    signals and tests' source, cut a little short of their wants, came out longer than uncut. So a text
    over its share is made again, shorter by what it passed."""
    text = section.render(share)
    over = size(text) - share
    return section.render(max(section.floor, share - over)) if over > 0 else text
