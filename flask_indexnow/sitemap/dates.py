"""W3C datetimes, as found in ``<lastmod>`` and given to ``--since``.

Sitemaps write ``lastmod`` at any precision from a bare year to a fraction of a
second, so a value names a *period*; the ``since`` filter drops an entry only
when the whole period is before the cutoff, never for a vague date.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta, timezone

from .. import clock

_W3C_RE = re.compile(
    r"(?P<y>\d{4})(?:-(?P<m>\d{2})(?:-(?P<d>\d{2})"
    r"(?:[Tt ](?P<H>\d{2}):(?P<M>\d{2})(?::(?P<S>\d{2})(?:[.,](?P<f>\d{1,9}))?)?"
    r"(?P<tz>[Zz]|[+-]\d{2}(?::?\d{2})?)?)?)?)?"
)


def parse_w3c_datetime(text: str) -> tuple[datetime, datetime] | None:
    """Read a W3C datetime (``YYYY``, ``YYYY-MM``, ``YYYY-MM-DD``, or a full time with zone).

    Returns the first and the last instant of the period the value names (a
    bare year covers the whole year), both aware UTC, or None when ``text`` is
    not such a value. A time without a zone is taken as UTC, as everywhere
    in the extension; a space may stand for the ``T``.
    """
    match = _W3C_RE.fullmatch(text.strip())
    if not match:
        return None
    g = match.groupdict()
    try:
        year, month, day = int(g["y"]), int(g["m"] or 1), int(g["d"] or 1)
        hour, minute, second = int(g["H"] or 0), int(g["M"] or 0), int(g["S"] or 0)
        micro = int((g["f"] or "0")[:6].ljust(6, "0"))
        zone = timezone.utc
        if g["tz"] and g["tz"] not in "Zz":
            sign = -1 if g["tz"][0] == "-" else 1
            digits = g["tz"][1:].replace(":", "")
            offset = timedelta(hours=int(digits[:2]), minutes=int(digits[2:] or 0))
            zone = timezone(sign * offset)
        start = datetime(year, month, day, hour, minute, second, micro, tzinfo=zone)
    except ValueError:
        return None
    try:
        if g["m"] is None:
            following = start.replace(year=year + 1)
        elif g["d"] is None:
            following = start.replace(year=year + month // 12, month=month % 12 + 1)
        elif g["H"] is None:
            following = start + timedelta(days=1)
        elif g["S"] is None:
            following = start + timedelta(minutes=1)
        elif g["f"] is None:
            following = start + timedelta(seconds=1)
        else:
            following = start + timedelta(microseconds=1)
        end = following - timedelta(microseconds=1)
    except (ValueError, OverflowError):
        end = datetime.max.replace(tzinfo=timezone.utc)
    try:
        return clock.as_utc(start), clock.as_utc(end)
    except OverflowError:
        return None


def parse_since(value: str | date | datetime | None) -> datetime | None:
    """The ``--since`` moment as aware UTC: a date means its midnight UTC; naive means UTC."""
    if value is None:
        return None
    if isinstance(value, (date, datetime)):
        return clock.as_utc(value)
    period = parse_w3c_datetime(value)
    if period is None:
        raise ValueError(
            f"--since: cannot read {value!r} as a date "
            "(use YYYY-MM-DD, or YYYY-MM-DDThh:mm:ss with an optional zone such as Z or +02:00)"
        )
    return period[0]
