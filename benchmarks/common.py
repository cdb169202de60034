"""What every benchmark shares: a row of the table, medians, the command line, the table itself."""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Row:
    name: str
    value: float
    unit: str
    target: str = ""
    ok: bool | None = None
    note: str = ""


def median_of(runs: int, action: Callable[[], object]) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def coderefine_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "coderefine", *args]


def render(rows: list[Row]) -> str:
    width = max(len(r.name) for r in rows) + 2
    out = [f"{'benchmark':<{width}} {'median':>10}  {'target':<10} verdict"]
    for r in rows:
        verdict = "" if r.ok is None else ("ok" if r.ok else "OVER")
        note = f"  ({r.note})" if r.note else ""
        value = f"{r.value:>8.2f}" if r.unit == "x" else f"{r.value:>8.1f}"
        out.append(f"{r.name:<{width}} {value} {r.unit:<3} {r.target:<10} {verdict}{note}")
    return "\n".join(out)
