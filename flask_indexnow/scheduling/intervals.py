"""The interval grammar of ``every()`` and the arithmetic behind it.

An interval is one or more terms, each a whole number and a unit, optionally
with a leading ``+`` (so PHP-style ``"+1 day"`` reads the same)::

    30 minutes · 1 hour · +1 day · 2 weeks · 1 month · 1 hour 30 minutes

Units, singular or plural, case-insensitive: ``second``, ``minute``,
``hour``, ``day``, ``week``, ``month``, ``year``. Each unit may appear once;
the whole interval is at least one second and at most 100 years. Anything
else raises :class:`ValueError` naming the expression.

Seconds to weeks are fixed lengths of time (schedules run in UTC, which has
no daylight-saving jumps). Months and years are calendar arithmetic that
never overflows into the next month: the n-th occurrence is the anchor plus
n months, clamped to the month's last day, always counted from the anchor.
So a monthly schedule anchored on 31 January runs on 28 (or 29) February and
then on 31 March again, not on the 28th for ever after.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import datetime, timedelta

_UNITS: dict[str, tuple[int, int]] = {  # unit → (months, seconds) per 1
    "second": (0, 1),
    "minute": (0, 60),
    "hour": (0, 3600),
    "day": (0, 86400),
    "week": (0, 7 * 86400),
    "month": (1, 0),
    "year": (12, 0),
}
_TERM = re.compile(r"\+?\s*(\d{1,7})\s*([a-z]+)")
#: An average Gregorian month, only used to estimate how many steps to skip.
_AVERAGE_MONTH = 30.436875 * 86400
_MAX_SECONDS = 100 * 365.2425 * 86400
#: Longest interval or cron expression (its whitespace tidied) the schedule table's column holds.
MAX_EXPRESSION_LENGTH = 255


@dataclass(frozen=True)
class Interval:
    """A parsed interval: whole calendar months plus a fixed number of seconds."""

    months: int
    seconds: int

    def approximate_seconds(self) -> float:
        return self.months * _AVERAGE_MONTH + self.seconds

    def occurrence(self, anchor: datetime, n: int) -> datetime:
        """The ``n``-th occurrence counted from ``anchor`` (``n = 0`` is the anchor)."""
        return add_months(anchor, self.months * n) + timedelta(seconds=self.seconds * n)

    def first_after(self, anchor: datetime, after: datetime) -> datetime:
        """The earliest occurrence (``n >= 1``) strictly later than ``after``.

        Counting from the anchor rather than from the previous run keeps the
        cadence exact: no drift, no clamped day carried forward, and after
        downtime the missed occurrences are skipped in one step.
        """
        n = max(1, int((after - anchor).total_seconds() // self.approximate_seconds()))
        # The estimate is off by at most a step or two (months vary in length).
        while n > 1 and self.occurrence(anchor, n - 1) > after:
            n -= 1
        while self.occurrence(anchor, n) <= after:
            n += 1
        return self.occurrence(anchor, n)

    def describe(self) -> str:
        """A canonical spelling, e.g. ``"1 hour 30 minutes"``."""
        parts: list[str] = []
        years, months = divmod(self.months, 12)
        rest = self.seconds
        amounts = [("year", years), ("month", months)]
        for unit in ("week", "day", "hour", "minute", "second"):
            size = _UNITS[unit][1]
            amounts.append((unit, rest // size))
            rest %= size
        for unit, amount in amounts:
            if amount:
                parts.append(f"{amount} {unit}{'' if amount == 1 else 's'}")
        return " ".join(parts)


def parse_interval(expression: str) -> Interval:
    """Parse ``expression`` (see the module docs); raise ``ValueError`` naming it."""
    if not isinstance(expression, str):
        raise ValueError(f"an interval must be a string such as '1 hour', got {expression!r}")
    text = expression.strip().lower()
    if len(text) > MAX_EXPRESSION_LENGTH:  # the schedule table's expression column
        raise ValueError(_bad(expression[:40] + "…", f"it is longer than {MAX_EXPRESSION_LENGTH} characters"))
    position = 0
    months = seconds = 0
    seen: set[str] = set()
    while position < len(text):
        match = _TERM.match(text, position)
        if match is None:
            raise ValueError(_bad(expression, "expected a number and a unit"))
        amount, word = int(match.group(1)), match.group(2)
        unit = word[:-1] if word.endswith("s") and word[:-1] in _UNITS else word
        if unit not in _UNITS:
            raise ValueError(_bad(expression, f"unknown unit {word!r}"))
        if unit in seen:
            raise ValueError(_bad(expression, f"{unit!r} appears twice"))
        seen.add(unit)
        unit_months, unit_seconds = _UNITS[unit]
        months += amount * unit_months
        seconds += amount * unit_seconds
        position = match.end()
        while position < len(text) and text[position].isspace():
            position += 1
    if not seen:
        raise ValueError(_bad(expression, "it is empty"))
    interval = Interval(months, seconds)
    if interval.approximate_seconds() < 1:
        raise ValueError(_bad(expression, "it must be at least 1 second"))
    if interval.approximate_seconds() > _MAX_SECONDS:
        raise ValueError(_bad(expression, "it must be at most 100 years"))
    return interval


def add_months(value: datetime, months: int) -> datetime:
    """``value`` plus ``months`` calendar months, clamped to the last day of the month."""
    if not months:
        return value
    index = value.year * 12 + value.month - 1 + months
    year, month = divmod(index, 12)
    day = min(value.day, calendar.monthrange(year, month + 1)[1])
    return value.replace(year=year, month=month + 1, day=day)


def _bad(expression: object, why: str) -> str:
    return (
        f"invalid interval {expression!r}: {why} (use e.g. '30 minutes', '1 hour', "
        "'1 hour 30 minutes', '2 weeks', '1 month'; units second, minute, hour, day, week, month, year)"
    )


def parse_duration(expression: str, what: str = "a duration") -> timedelta:
    """A fixed length of time in the interval grammar (``"10 minutes"``), for grace and expiry.

    Months and years have no fixed length: refused, naming ``what``.
    """
    interval = parse_interval(expression)
    if interval.months:
        raise ValueError(f"{what} must be a fixed length of time (seconds to weeks), got {expression!r}")
    return timedelta(seconds=interval.seconds)
