"""Plots as inline SVG text, drawn from numbers alone: a scatter with interval bars and grouped bars.

No plotting library: the page they go into must open anywhere, offline, with nothing to install.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

WIDTH, HEIGHT = 640, 360
LEFT, RIGHT, TOP, BOTTOM = 64, 24, 28, 64
# Colour-blind-safe (Okabe and Ito), in a fixed order so a strategy keeps its colour on every plot.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")


@dataclass(frozen=True)
class Point:
    label: str
    x: float
    y: float
    x_low: float | None = None
    x_high: float | None = None
    y_low: float | None = None
    y_high: float | None = None


@dataclass(frozen=True)
class Bar:
    value: float  # 0..1
    low: float | None = None
    high: float | None = None
    note: str = ""  # the tooltip: counts behind the rate


def colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def _nice_max(value: float) -> float:
    if value <= 0:
        return 1.0
    step = 10.0 ** math.floor(math.log10(value))
    for factor in (1, 2, 2.5, 5, 10):
        if factor * step >= value:
            return factor * step
    return 10 * step  # pragma: no cover - the loop ends at 10


def _frame(plot_id: str, title: str, body: list[str], x_label: str, y_label: str) -> str:
    return "\n".join(
        [
            f'<svg id="{escape(plot_id)}" class="plot" xmlns="http://www.w3.org/2000/svg" '
            f'viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" role="img" '
            f'aria-label="{escape(title)}">',
            f"<title>{escape(title)}</title>",
            f'<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="#fff"/>',
            *body,
            f'<text x="{LEFT + (WIDTH - LEFT - RIGHT) / 2}" y="{HEIGHT - 12}" text-anchor="middle" '
            f'font-size="13">{escape(x_label)}</text>',
            f'<text transform="translate(16 {TOP + (HEIGHT - TOP - BOTTOM) / 2}) rotate(-90)" '
            f'text-anchor="middle" font-size="13">{escape(y_label)}</text>',
            "</svg>",
        ]
    )


def _y_axis(top: float) -> list[str]:
    """Horizontal grid lines and labels for 0..top (a rate shown in percent)."""
    body = []
    inner = HEIGHT - TOP - BOTTOM
    for i in range(6):
        value = top * i / 5
        y = HEIGHT - BOTTOM - inner * i / 5
        body.append(
            f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>'
            f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11">{value * 100:.0f}%</text>'
        )
    return body


def scatter(plot_id: str, title: str, points: Sequence[Point], x_label: str, y_label: str) -> str:
    """Each point with its 95% intervals as whiskers; x from 0 to a round maximum, y a rate 0..100%."""
    x_top = _nice_max(max((p.x_high or p.x for p in points), default=0.0) * 1.05)
    inner_w, inner_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def px(x: float) -> float:
        return LEFT + inner_w * min(x, x_top) / x_top

    def py(y: float) -> float:
        return HEIGHT - BOTTOM - inner_h * y

    body = _y_axis(1.0)
    for i in range(6):
        x = x_top * i / 5
        body.append(
            f'<text x="{px(x):.1f}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle" font-size="11">'
            f"${x:.3g}</text>"
        )
    for index, point in enumerate(points):
        fill = colour(index)
        parts = [f'<g class="point" data-label="{escape(point.label)}">']
        if point.y_low is not None and point.y_high is not None:
            parts.append(
                f'<line class="ci" x1="{px(point.x):.1f}" x2="{px(point.x):.1f}" y1="{py(point.y_low):.1f}" '
                f'y2="{py(point.y_high):.1f}" stroke="{fill}" stroke-width="2"/>'
            )
        if point.x_low is not None and point.x_high is not None:
            parts.append(
                f'<line class="ci" x1="{px(point.x_low):.1f}" x2="{px(point.x_high):.1f}" '
                f'y1="{py(point.y):.1f}" y2="{py(point.y):.1f}" stroke="{fill}" stroke-width="2" '
                'opacity="0.6"/>'
            )
        parts.append(
            f'<circle cx="{px(point.x):.1f}" cy="{py(point.y):.1f}" r="6" fill="{fill}">'
            f"<title>{escape(point.label)}: {point.y:.0%} at ${point.x:.4f}</title></circle>"
            f'<text x="{px(point.x) + 9:.1f}" y="{py(point.y) - 8:.1f}" font-size="12">'
            f"{escape(point.label)}</text>"
            "</g>"
        )
        body.append("".join(parts))
    return _frame(plot_id, title, body, x_label, y_label)


def grouped_bars(
    plot_id: str,
    title: str,
    groups: Sequence[str],
    series: Sequence[tuple[str, Sequence[Bar | None]]],
    x_label: str,
    y_label: str,
    top: float = 1.0,
) -> str:
    """One cluster per group, one bar per series (a missing value leaves a gap), with interval whiskers."""
    inner_w, inner_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM - 18  # room for the legend
    body = _y_axis(top)
    slot = inner_w / max(len(groups), 1)
    width = slot * 0.8 / max(len(series), 1)

    def py(y: float) -> float:
        return HEIGHT - BOTTOM - (HEIGHT - TOP - BOTTOM) * min(y, top) / top

    for g, group in enumerate(groups):
        centre = LEFT + slot * (g + 0.5)
        body.append(
            f'<text x="{centre:.1f}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle" font-size="11">'
            f"{escape(group)}</text>"
        )
        for s, (name, bars) in enumerate(series):
            bar = bars[g] if g < len(bars) else None
            if bar is None:
                continue
            x = centre - slot * 0.4 + width * s
            fill = colour(s)
            body.append(
                f'<rect class="bar" x="{x:.1f}" y="{py(bar.value):.1f}" width="{width * 0.9:.1f}" '
                f'height="{py(0) - py(bar.value):.1f}" fill="{fill}"><title>{escape(name)}, {escape(group)}: '
                f"{bar.value:.0%} {escape(bar.note)}</title></rect>"
            )
            if bar.low is not None and bar.high is not None:
                mid = x + width * 0.45
                body.append(
                    f'<line class="ci" x1="{mid:.1f}" x2="{mid:.1f}" y1="{py(bar.low):.1f}" '
                    f'y2="{py(bar.high):.1f}" stroke="#333" stroke-width="1.5"/>'
                )
    legend_x = LEFT
    for s, (name, _) in enumerate(series):
        body.append(
            f'<rect x="{legend_x}" y="{TOP - 20}" width="10" height="10" fill="{colour(s)}"/>'
            f'<text x="{legend_x + 14}" y="{TOP - 11}" font-size="11">{escape(name)}</text>'
        )
        legend_x += 24 + 7 * len(name)
    del inner_h
    return _frame(plot_id, title, body, x_label, y_label)
