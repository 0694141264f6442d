"""One source of "now" for the whole extension.

Every module asks :func:`utcnow` rather than calling :func:`datetime.now` itself,
so tests can move time forward without sleeping and all comparisons against the
database use the same clock. Times are aware and in UTC; naive datetimes that
reach the extension are taken as UTC.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime, timezone

_source: Callable[[], datetime] = lambda: datetime.now(timezone.utc)  # noqa: E731


def utcnow() -> datetime:
    """Return the current time as an aware UTC datetime."""
    return _source()


def set_source(source: Callable[[], datetime] | None) -> None:
    """Replace the time source (tests); ``None`` restores the real clock."""
    global _source
    _source = source or (lambda: datetime.now(timezone.utc))


def as_utc(value: datetime | date) -> datetime:
    """Return ``value`` as an aware UTC datetime; naive values are taken as UTC.

    A plain :class:`date` means midnight UTC of that day.
    """
    if not isinstance(value, datetime):
        value = datetime(value.year, value.month, value.day)
    if value.tzinfo is None:
        return value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc)
