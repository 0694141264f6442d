"""Deliveries per hour as the geometry of a stacked bar chart.

The page draws it as inline SVG from these numbers: no JavaScript, no CDN,
no build step, and it works with scripts disabled. Only numbers and plain
text leave this module; the template escapes the text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

#: Stacked bottom to top; each has a CSS class ``s-<name>``.
SERIES = ("success", "retry", "failed")
WIDTH = 720
HEIGHT = 180
LEFT = 34
RIGHT = 6
TOP = 10
BOTTOM = 24


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    series: str


@dataclass(frozen=True)
class Column:
    """One hour: its stacked bars and the tooltip that names its counts."""

    x: float
    width: float
    title: str
    bars: list[Bar]


@dataclass(frozen=True)
class Tick:
    x: float
    y: float
    label: str


@dataclass
class Chart:
    width: int = WIDTH
    height: int = HEIGHT
    columns: list[Column] = field(default_factory=list)
    x_ticks: list[Tick] = field(default_factory=list)
    y_ticks: list[Tick] = field(default_factory=list)
    totals: dict[str, int] = field(default_factory=dict)
    hours: int = 0
    plot_left: float = LEFT
    plot_right: float = WIDTH - RIGHT
    baseline: float = HEIGHT - BOTTOM

    @property
    def empty(self) -> bool:
        return not any(self.totals.values())

    @property
    def summary(self) -> str:
        parts = ", ".join(f"{self.totals.get(s, 0)} {s}" for s in SERIES)
        return f"Deliveries per hour over the last {self.hours} hours: {parts}."


def nice_ceiling(value: int) -> int:
    """The smallest of 1, 2, 5, 10, 20, 50 … that is at least ``value``."""
    step = 1
    while True:
        for factor in (1, 2, 5):
            if step * factor >= value:
                return step * factor
        step *= 10


def build_chart(buckets: list[dict[str, Any]]) -> Chart:
    """Lay out ``buckets`` (from :func:`stats.deliveries_per_hour`) as stacked columns."""
    chart = Chart(hours=len(buckets))
    chart.totals = {s: sum(int(b.get(s, 0)) for b in buckets) for s in SERIES}
    if not buckets:
        return chart
    plot_height = chart.baseline - TOP
    peak = max(sum(int(b.get(s, 0)) for s in SERIES) for b in buckets)
    top = nice_ceiling(max(peak, 1))
    slot = (chart.plot_right - chart.plot_left) / len(buckets)
    gap = min(1.0, slot * 0.2)
    for index, bucket in enumerate(buckets):
        x = chart.plot_left + index * slot
        start = datetime.fromisoformat(bucket["hour"])
        y = chart.baseline
        bars = []
        for series in SERIES:
            count = int(bucket.get(series, 0))
            if not count:
                continue
            height = count / top * plot_height
            y -= height
            bars.append(Bar(round(x + gap / 2, 2), round(y, 2), round(slot - gap, 2), round(height, 2), series))
        counts = ", ".join(f"{int(bucket.get(s, 0))} {s}" for s in SERIES)
        chart.columns.append(Column(round(x, 2), round(slot, 2), f"{start:%Y-%m-%d %H}:00 UTC: {counts}", bars))
        if start.hour == 0 or (index == 0 and start.hour <= 16):  # no overlapping labels
            chart.x_ticks.append(Tick(round(x, 2), chart.height - 8, f"{start:%a %d %b}" if start.hour == 0
                                      else f"{start:%H}:00"))
    for value in (0, top // 2, top) if top % 2 == 0 else (0, top):
        chart.y_ticks.append(Tick(chart.plot_left - 4, round(chart.baseline - value / top * plot_height, 2),
                                  str(value)))
    return chart
