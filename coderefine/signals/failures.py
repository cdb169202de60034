"""Failing tests grouped by where they fail, and a list of signals folded to a size.

A one-line bug can fail a hundred tests at one place (an assert in a shared helper, a raise inside the code
under test): their tracebacks are the same but for the test's own line. Such a flood is shown as groups:
the first ``FULL`` of a group in full, the rest one line each (test id and message), then a count of what
did not fit; the same folding serves the prompts and the text report, each with its own size.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from coderefine.signals.base import Signal

FULL = 2  # members of a group shown in full (with their traceback); the rest one line each
LOCALS_HEADER = "Local values where the assert failed"

_LOCATION = re.compile(r"^(?P<place>\S.*:\d+): in \S+")
_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
_NUMBER = re.compile(r"\b0x[0-9a-fA-F]+\b|\b\d+(?:\.\d+)?\b")


def split_locals(detail: str) -> tuple[str, str]:
    """A test's detail as its traceback and the block of local values the plugin added (or "")."""
    head, mark, tail = detail.partition(LOCALS_HEADER)
    return (head, mark + tail) if mark else (detail, "")


def innermost(traceback: str) -> str:
    """The innermost frame (``path:line``) of a short pytest traceback, or "" if it names none."""
    rows = [m.group("place") for row in traceback.splitlines() if (m := _LOCATION.match(row))]
    return rows[-1] if rows else ""


def place(signal: Signal) -> str:
    """Where a failing test failed: its innermost traceback frame (``path:line``), or "" if none."""
    return innermost(split_locals(signal.detail)[0])


def shape(message: str) -> str:
    """``message`` with quoted strings and numbers blanked: failures that differ only in their values
    (``assert 'ab' == 'ba'`` and ``assert 'cd' == 'dc'``) have one shape."""
    return _NUMBER.sub("N", _QUOTED.sub("'…'", message))


@dataclass(frozen=True)
class Group:
    """Signals that failed the same way: the same innermost frame and the same message shape. A signal
    that is not a failing test with a traceback is a group of its own."""

    place: str
    members: tuple[Signal, ...]

    @property
    def first(self) -> Signal:
        return self.members[0]


def _key(signal: Signal, index: int) -> tuple[str, ...]:
    if signal.source != "pytest":
        return ("", str(index))
    where = place(signal)
    if where:
        return ("place", where, shape(signal.message))
    if "[" in signal.code:  # the cases of one parametrized test, when no frame says more
        return ("case", signal.code.split("[", 1)[0], shape(signal.message))
    return ("", str(index))


def group_failures(signals: Sequence[Signal]) -> tuple[Group, ...]:
    """``signals`` as groups, in the order of each group's first member."""
    groups: dict[tuple[str, ...], list[Signal]] = {}
    for index, signal in enumerate(signals):
        groups.setdefault(_key(signal, index), []).append(signal)
    return tuple(
        Group(place(members[0]) if key[0] == "place" else "", tuple(members))
        for key, members in groups.items()
    )


def _distinct(signals: Sequence[Signal]) -> tuple[list[Signal], dict[int, int]]:
    """``signals`` without exact repeats, and how many times each kept one was reported. pytest reports
    each failing subtest of a ``unittest`` loop on its own; ten copies of one traceback say no more than
    one does. A copy without a traceback joins the copy of the same test and message that has one."""
    kept: dict[tuple[object, ...], Signal] = {}
    times: dict[tuple[object, ...], int] = {}
    for signal in signals:
        key = _identity(signal)
        kept.setdefault(key, signal)
        times[key] = times.get(key, 0) + 1
    traced = {key[:-1]: key for key in kept if key[0] == "pytest" and key[-1]}
    for key in [k for k in kept if k[0] == "pytest" and not k[-1] and k[:-1] in traced]:
        times[traced[key[:-1]]] += times.pop(key)
        del kept[key]
    return list(kept.values()), {id(signal): times[key] for key, signal in kept.items()}


def _identity(signal: Signal) -> tuple[object, ...]:
    if signal.source == "pytest":
        return (signal.source, signal.code, signal.message, place(signal))
    return (signal.source, signal.code, signal.path, signal.line, signal.column, signal.message)


def _counting(render: Callable[[Signal], str], repeats: dict[int, int]) -> Callable[[Signal], str]:
    """``render``, saying on its first line how many identical reports a signal stands for."""

    def rendered(signal: Signal) -> str:
        text = render(signal)
        times = repeats[id(signal)]
        if times < 2:
            return text
        head, newline, rest = text.partition("\n")
        return f"{head} (reported {times} times, identically){newline}{rest}"

    return rendered


@dataclass(frozen=True)
class Folded:
    """The lines of a folded list, and how many signals it shows only as a count."""

    lines: tuple[str, ...]
    counted: int


def fold(
    signals: Sequence[Signal],
    full: Callable[[Signal], str],
    short: Callable[[Signal], str],
    budget: int,
    bullet: str = "- ",
    short_cap: int = 0,
) -> Folded:
    """``signals`` grouped, within about ``budget`` characters (0: no limit). The first member of each
    group is shown in full first, then the second, then the others one line each, round-robin over the
    groups, while the budget lasts; what is left is counted per group (and the groups not shown at all,
    in one line). ``short_cap`` bounds the one-line members of each group (0: the budget alone).
    Identical reports (a test's subtests failing the same way) are one entry that says how many."""
    signals, repeats = _distinct(signals)
    full, short = _counting(full, repeats), _counting(short, repeats)
    groups = group_failures(signals)
    chosen: list[dict[int, bool]] = [{} for _ in groups]  # member index -> shown in full
    spent = 0

    def take(g: int, i: int, whole: bool) -> bool:
        nonlocal spent
        cost = len(full(groups[g].members[i]) if whole else short(groups[g].members[i])) + 1
        if budget and spent + cost > budget and spent:
            return False
        spent += cost
        chosen[g][i] = whole
        return True

    stop = False
    for rank in range(FULL):
        for g, group in enumerate(groups):
            if rank < len(group.members) and not take(g, rank, True):
                stop = True
                break
        if stop:
            break
    while not stop:
        progress = False
        for g, group in enumerate(groups):
            if not chosen[g]:
                continue
            rest = [i for i in range(FULL, len(group.members)) if i not in chosen[g]]
            if rest and (not short_cap or len(chosen[g]) - FULL < short_cap):
                if not take(g, rest[0], False):
                    stop = True
                    break
                progress = True
        if not progress:
            break

    lines: list[str] = []
    counted = 0
    unseen = 0
    for g, group in enumerate(groups):
        if not chosen[g]:
            unseen += len(group.members)
            continue
        for i in sorted(chosen[g]):
            lines.append(full(group.members[i]) if chosen[g][i] else short(group.members[i]))
        left = len(group.members) - len(chosen[g])
        if left:
            counted += left
            where = f" at {group.place}" if group.place else ""
            lines.append(
                f"{bullet}... and {left} more that failed the same way{where} ({group.first.message})"
            )
    if unseen:
        counted += unseen
        lines.append(f"{bullet}... and {unseen} more signal{'s' if unseen != 1 else ''} not shown")
    return Folded(tuple(lines), counted)
