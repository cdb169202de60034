"""Honest figures for small samples: Wilson intervals for a rate, McNemar's exact test for two strategies
on the same tasks."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

Z95 = 1.959963984540054


def wilson(successes: int, total: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a rate (95% by default); (0, 1) when there is no trial."""
    if total <= 0:
        return 0.0, 1.0
    rate = successes / total
    denominator = 1 + z * z / total
    centre = (rate + z * z / (2 * total)) / denominator
    half = z * math.sqrt(rate * (1 - rate) / total + z * z / (4 * total * total)) / denominator
    # At 0 or all successes the bound is exactly 0 or 1; floating point leaves ~1e-17 off it.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == total else min(1.0, centre + half)
    return low, high


def mcnemar_exact(only_first: int, only_second: int) -> float:
    """Two-sided exact p-value of McNemar's test: under no difference, each discordant task is a fair coin."""
    n = only_first + only_second
    if n == 0:
        return 1.0
    k = min(only_first, only_second)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return float(min(1.0, 2 * tail))


@dataclass(frozen=True)
class Comparison:
    first: str
    second: str
    tasks: int  # tasks both strategies ran
    only_first: int  # fixed by the first, not the second
    only_second: int
    p_value: float

    @property
    def verdict(self) -> str:
        if self.p_value >= 0.05:
            return "no difference shown"
        better = self.first if self.only_first > self.only_second else self.second
        return f"{better} better (p = {self.p_value:.3g})"


def compare(fixed: Mapping[str, Mapping[str, bool]]) -> list[Comparison]:
    """Every pair of strategies on the tasks both ran; ``fixed`` maps strategy -> task id -> fixed."""
    names = list(fixed)
    found = []
    for i, first in enumerate(names):
        for second in names[i + 1 :]:
            common = sorted(set(fixed[first]) & set(fixed[second]))
            a = sum(1 for t in common if fixed[first][t] and not fixed[second][t])
            b = sum(1 for t in common if fixed[second][t] and not fixed[first][t])
            found.append(Comparison(first, second, len(common), a, b, mcnemar_exact(a, b)))
    return found


def rate_cell(successes: int, total: int) -> str:
    """``12/40 30% [18-46]``: the count, the rate and its 95% interval."""
    if total == 0:
        return "-"
    low, high = wilson(successes, total)
    return f"{successes}/{total} {successes / total:.0%} [{low * 100:.0f}-{high * 100:.0f}]"


def grouped(values: Sequence[tuple[str, bool]]) -> dict[str, tuple[int, int]]:
    """(successes, total) per group."""
    table: dict[str, tuple[int, int]] = {}
    for group, ok in values:
        done, total = table.get(group, (0, 0))
        table[group] = (done + ok, total + 1)
    return dict(sorted(table.items()))
