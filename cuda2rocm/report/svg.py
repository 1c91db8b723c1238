"""Inline SVG charts for the HTML report: no scripts, no external assets, every shape labelled.

Charts scale with their container (a `viewBox`, no fixed width). Colours come from CSS classes
(`c-<key>`) that the report's stylesheet defines for light and dark schemes, with a `fill` or
`stroke` attribute as the fallback when the SVG is viewed on its own. Each chart carries a
`<title>` and a `<desc>` that states its figures in words; the report puts a table or a list
with the same figures beside it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

#: Fallback colours (light scheme); the stylesheet overrides them per scheme.
COLOURS = {
    "error": "#b3261e",
    "warning": "#a15c00",
    "info": "#0b61a4",
    "safe": "#1e7d32",
    "unsafe": "#a15c00",
    "manual": "#6a3fa0",
    "empty": "#d0d0d0",
}


@dataclass(frozen=True)
class Segment:
    key: str  # colour class and legend key, e.g. "error"
    label: str  # words for people, e.g. "errors"
    value: int


def _text(value: object) -> str:
    return escape(str(value), quote=True)


def stacked_bars(
    rows: Sequence[tuple[str, Sequence[Segment]]],
    *,
    title: str,
    desc: str,
    chart_id: str,
) -> str:
    """One horizontal bar per row (label, segments), segments stacked left to right.

    Each row's label and total sit on a line above its bar, so the chart stays legible when
    it is scaled down to a phone's width.
    """
    width, label_h, bar_h, gap, top = 400, 17, 16, 9, 4
    row_h = label_h + bar_h + gap
    height = top + len(rows) * row_h
    biggest = max((sum(s.value for s in segs) for _, segs in rows), default=0) or 1
    out = [
        f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" '
        f'aria-labelledby="{chart_id}-t {chart_id}-d" xmlns="http://www.w3.org/2000/svg">',
        f'<title id="{chart_id}-t">{_text(title)}</title>',
        f'<desc id="{chart_id}-d">{_text(desc)}</desc>',
    ]
    for i, (label, segments) in enumerate(rows):
        y = top + i * row_h
        bar_y = y + label_h
        total = sum(s.value for s in segments)
        out.append(f'<text class="label" x="0" y="{y + 12}">{_text(label)}</text>')
        out.append(f'<text class="value" x="{width}" y="{y + 12}" text-anchor="end">{total}</text>')
        out.append(
            f'<rect class="track" x="0" y="{bar_y}" width="{width}" height="{bar_h}" '
            f'fill="{COLOURS["empty"]}" opacity="0.35"/>'
        )
        x = 0.0
        for seg in segments:
            if not seg.value:
                continue
            w = width * seg.value / biggest
            out.append(
                f'<rect class="c-{seg.key}" x="{x:.2f}" y="{bar_y}" width="{w:.2f}" '
                f'height="{bar_h}" fill="{COLOURS.get(seg.key, "#777")}">'
                f"<title>{_text(label)}: {seg.value} {_text(seg.label)}</title></rect>"
            )
            x += w
    out.append("</svg>")
    return "".join(out)


def donut(segments: Sequence[Segment], *, title: str, desc: str, chart_id: str, centre: str) -> str:
    """A ring divided in proportion to the segments, with `centre` written in its middle."""
    size, r, stroke = 160, 60, 26
    c = size / 2
    circumference = 2 * math.pi * r
    total = sum(s.value for s in segments)
    out = [
        f'<svg class="donut" viewBox="0 0 {size} {size}" role="img" '
        f'aria-labelledby="{chart_id}-t {chart_id}-d" xmlns="http://www.w3.org/2000/svg">',
        f'<title id="{chart_id}-t">{_text(title)}</title>',
        f'<desc id="{chart_id}-d">{_text(desc)}</desc>',
        f'<circle class="track" cx="{c}" cy="{c}" r="{r}" fill="none" '
        f'stroke="{COLOURS["empty"]}" stroke-width="{stroke}" opacity="0.35"/>',
    ]
    offset = 0.0
    for seg in segments:
        if not seg.value or not total:
            continue
        length = circumference * seg.value / total
        # Start at 12 o'clock and go clockwise: rotate by -90 degrees, dash offset backwards.
        out.append(
            f'<circle class="c-{seg.key} ring" cx="{c}" cy="{c}" r="{r}" fill="none" '
            f'stroke="{COLOURS.get(seg.key, "#777")}" stroke-width="{stroke}" '
            f'stroke-dasharray="{length:.3f} {circumference - length:.3f}" '
            f'stroke-dashoffset="{-offset:.3f}" transform="rotate(-90 {c} {c})">'
            f"<title>{seg.value} {_text(seg.label)}</title></circle>"
        )
        offset += length
    out.append(
        f'<text class="centre" x="{c}" y="{c + 7}" text-anchor="middle">{_text(centre)}</text>'
    )
    out.append("</svg>")
    return "".join(out)
