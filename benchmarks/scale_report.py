"""The scale benchmark's records and their rendering: the "At scale" section and its curve."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Row:
    """One measured command on one repository and change."""

    command: str
    files: int
    changed: int
    wall_s: float
    peak_mib: float
    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    note: str = ""


@dataclass(frozen=True)
class TreeRow:
    """Preparing a candidate's tree: today's temporary copy, the persistent copy's first fill, and its
    preparation once warm (median), with the bytes a candidate writes."""

    project: str
    files: int
    changed: int
    copy_s: float
    first_fill_s: float
    prepare_s: float
    prepare_cpu_s: float
    written_kib: float


def markdown(
    header: str,
    trees: Sequence[TreeRow],
    selection: Sequence[str],
    rows: Sequence[Row],
    firsts: Sequence[str],
) -> str:
    out = [header, ""]
    out += [
        "| project | files | changed | today's copy | persistent: first fill | persistent: prepare "
        "(wall / CPU) | written |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    out += [
        f"| {t.project} | {t.files} | {t.changed} | {t.copy_s:.2f} s | {t.first_fill_s:.2f} s | "
        f"{t.prepare_s * 1000:.0f} / {t.prepare_cpu_s * 1000:.0f} ms | {t.written_kib:.1f} KiB |"
        for t in trees
    ]
    out += ["", *selection, ""]
    out += [
        "| command | files | changed | wall | peak memory | model calls | tokens in / out | note |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    out += [
        f"| {r.command} | {r.files} | {r.changed} | {r.wall_s:.2f} s | {r.peak_mib:.0f} MiB | {r.calls} | "
        f"{r.tokens_in} / {r.tokens_out} | {r.note} |"
        for r in rows
    ]
    if firsts:
        out += ["", "First runs (a persistent copy made, or the import index built):", ""]
        out += [f"- {line}" for line in firsts]
    return "\n".join(out) + "\n"


def plot(rows: Sequence[Row], path: Path) -> bool:
    """Wall time against repository size, one line per command and change size; False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("docs/scale.png not drawn: matplotlib is missing (pip install -e '.[bench]')", file=sys.stderr)
        return False
    figure, axis = plt.subplots(figsize=(7, 4.5))
    for command in sorted({r.command for r in rows}):
        for changed in sorted({r.changed for r in rows if r.command == command}):
            points = sorted(
                (r.files, r.wall_s) for r in rows if r.command == command and r.changed == changed
            )
            axis.plot(*zip(*points, strict=True), marker="o", label=f"{command}, {changed} changed")
    axis.set_xscale("log")
    axis.set_xlabel("files in the repository")
    axis.set_ylabel("wall time (s)")
    axis.set_title("coderefine at scale (zero-latency model)")
    axis.grid(True, alpha=0.3)
    axis.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    return True


def write_docs(section: str, docs: Path) -> None:
    """Replace (or add) the "At scale" section of docs/benchmarks.md."""
    page = docs / "benchmarks.md"
    text = page.read_text("utf-8") if page.exists() else "# Benchmarks\n"
    start = text.find("\n## At scale\n")
    if start >= 0:
        end = text.find("\n## ", start + 1)
        text = text[:start] + ("\n" + text[end + 1 :] if end >= 0 else "")
    page.write_text(text.rstrip("\n") + "\n\n" + section, "utf-8")
