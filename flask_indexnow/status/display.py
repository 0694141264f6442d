"""Jinja filters that make stored values safe to read, not just safe to render.

Autoescaping already makes hostile text inert as HTML; these filters also
keep it from misleading the reader: invisible and direction-changing
characters (U+202E and friends) are shown as ``[U+202E]``, and very long
values are cut so one URL cannot stretch the layout.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from datetime import datetime
from typing import Any

from .. import clock

#: Characters shown as code points: controls, format characters (bidi
#: overrides, zero-width), surrogates, line and paragraph separators.
_HIDDEN = ("Cc", "Cf", "Cs", "Zl", "Zp")


def visible(value: Any, limit: int | None = None) -> str:
    """``value`` as text with hidden characters spelled out, cut to ``limit`` characters."""
    if value is None:
        return ""
    text = "".join(
        f"[U+{ord(ch):04X}]" if unicodedata.category(ch) in _HIDDEN else ch for ch in str(value)
    )
    if limit is not None and len(text) > limit:
        text = text[: max(limit - 1, 1)] + "…"
    return text


def utc_time(value: datetime | None) -> str:
    if value is None:
        return "—"
    return f"{clock.as_utc(value):%Y-%m-%d %H:%M:%S} UTC"


def duration(seconds: float | None) -> str:
    """A short human duration: 45s, 12 min, 3 h 5 min, 2 d 4 h."""
    if seconds is None:
        return "—"
    seconds = abs(float(seconds))
    if seconds < 60:
        return f"{seconds:.0f}s"
    minutes = int(seconds // 60)
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h" if hours else f"{days} d"


def relative(value: datetime | None) -> str:
    """"5 min ago" or "in 5 min", against the extension's clock."""
    if value is None:
        return "never"
    delta = (clock.as_utc(value) - clock.utcnow()).total_seconds()
    if abs(delta) < 1:
        return "now"
    return f"in {duration(delta)}" if delta > 0 else f"{duration(delta)} ago"


FILTERS: dict[str, Callable[..., Any]] = {
    "indexnow_visible": visible,
    "indexnow_time": utc_time,
    "indexnow_duration": duration,
    "indexnow_relative": relative,
}
