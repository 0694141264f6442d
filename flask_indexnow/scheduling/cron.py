"""Cron expressions in a time zone, correct across daylight-saving changes.

The expression is matched against the wall clock of its time zone (croniter
works on naive wall times, where nothing jumps), and each matching wall time
is then turned into a UTC instant:

- a wall time that does not exist (the hour skipped in spring) runs once,
  shifted forward by the size of the gap: ``30 2 * * *`` runs at 03:30;
- a wall time that happens twice (the hour repeated in autumn) runs once, at
  its first occurrence, unless the hour field starts with ``*`` (``*/15 * …``,
  ``0 * …``): such jobs follow real time, so they run in both passes, as
  Vixie cron does.

The aliases of Vixie cron stand for their five fields (``@daily`` is
``0 0 * * *``) and are kept as written, so a schedule lists as its author
wrote it. ``@reboot`` has no place in a database-driven scheduler and is
refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import croniter

from .intervals import MAX_EXPRESSION_LENGTH

#: Hashed (``H``) and random (``R``) fields would differ between processes.
_NON_DETERMINISTIC = re.compile(r"(?:^|[,/-])[hr]", re.IGNORECASE)
_FIELD = re.compile(r"[0-9a-z*/,#?-]+", re.IGNORECASE)
#: Vixie cron's aliases and the expressions they stand for.
ALIASES = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
#: Largest daylight-saving shift looked around when matching wall times.
_SHIFT = timedelta(hours=3)


def load_timezone(name: str | None) -> ZoneInfo:
    """``ZoneInfo(name)`` (UTC when None), with a ``ValueError`` naming a bad zone."""
    if name is None:
        name = "UTC"
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"unknown timezone {name!r}")
    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown timezone {name!r} (use an IANA name such as 'Europe/Rome' or 'UTC')") from None


@dataclass(frozen=True)
class Cron:
    """A validated 5-field cron expression and its time zone."""

    expression: str
    timezone: str = "UTC"

    @classmethod
    def parse(cls, expression: str, timezone_name: str | None = None) -> Cron:
        """Validate ``expression`` and the zone; raise ``ValueError`` naming what is wrong."""
        if not isinstance(expression, str):
            raise ValueError(f"a cron expression must be a string such as '0 3 * * *', got {expression!r}")
        if expression.strip().startswith("@"):
            alias = expression.strip().lower()
            if alias not in ALIASES:
                raise ValueError(
                    f"invalid cron expression {expression!r}: the aliases are {', '.join(ALIASES)}"
                )
            zone = load_timezone(timezone_name)
            return cls(alias, zone.key)
        fields = expression.split()
        if len(fields) != 5:
            raise ValueError(
                f"invalid cron expression {expression!r}: it needs exactly 5 fields "
                "(minute hour day-of-month month day-of-week), e.g. '0 3 * * *'"
            )
        for field in fields:
            if not _FIELD.fullmatch(field) or _NON_DETERMINISTIC.search(field):
                raise ValueError(f"invalid cron expression {expression!r}: field {field!r} is not supported")
        normalised = " ".join(fields)
        if len(normalised) > MAX_EXPRESSION_LENGTH:  # the schedule table's expression column
            raise ValueError(f"invalid cron expression {expression[:40]!r}…: it is longer than {MAX_EXPRESSION_LENGTH} characters")
        if not croniter.is_valid(normalised):
            raise ValueError(f"invalid cron expression {expression!r}")
        zone = load_timezone(timezone_name)
        cron = cls(normalised, zone.key)
        try:
            cron.next_after(datetime(2000, 1, 1, tzinfo=timezone.utc))
        except ValueError:
            raise ValueError(f"invalid cron expression {expression!r}: it never matches a date") from None
        return cron

    @property
    def fields(self) -> str:
        """The five fields (an alias expanded)."""
        return ALIASES.get(self.expression, self.expression)

    @property
    def follows_real_time(self) -> bool:
        """True when the hour field is a wildcard: run in both passes of a repeated hour."""
        return self.fields.split()[1].startswith("*")

    def next_after(self, after: datetime) -> datetime:
        """The first matching instant strictly later than ``after`` (aware), in UTC."""
        zone = ZoneInfo(self.timezone)
        after = after.astimezone(timezone.utc)
        try:
            if self.timezone == "UTC":  # nothing jumps: the next wall time is the answer
                wall: datetime = self._walls(after.replace(tzinfo=None)).get_next(datetime)
                return wall.replace(tzinfo=timezone.utc)
            quick = _instant(self._walls(after.astimezone(zone).replace(tzinfo=None)).get_next(datetime), zone, 0)
            if quick > after and _steady(zone, after) and _steady(zone, quick):
                return quick  # no clock change near either end: wall order is time order
            return self._search(zone, after)
        except Exception as exc:  # croniter's own errors, e.g. no date ever matches
            raise ValueError(f"cron expression {self.expression!r}: {exc}") from None

    def _walls(self, start: datetime) -> croniter:
        return croniter(self.fields, start)

    def _search(self, zone: ZoneInfo, after: datetime) -> datetime:
        """Near a clock change: look at wall times a little either side."""
        # Start a little early in wall time: the repeated hour in autumn maps
        # later wall times to earlier instants.
        walls = self._walls(after.astimezone(zone).replace(tzinfo=None) - _SHIFT)
        best: datetime | None = None
        for _ in range(100_000):
            wall = walls.get_next(datetime)
            first = _instant(wall, zone, fold=0)
            if best is not None and first - _SHIFT >= best:
                return best
            for candidate in self._instants(wall, zone, first):
                if candidate > after and (best is None or candidate < best):
                    best = candidate
        raise LookupError("no next occurrence found")

    def _instants(self, wall: datetime, zone: ZoneInfo, first: datetime) -> list[datetime]:
        second = _instant(wall, zone, fold=1)
        if second != first and self.follows_real_time and _exists(wall, zone):
            return [first, second]  # a repeated wall time of a real-time job
        return [first]


def _instant(wall: datetime, zone: ZoneInfo, fold: int) -> datetime:
    """The UTC instant of a naive wall time; a skipped time moves forward by the gap."""
    return wall.replace(tzinfo=zone, fold=fold).astimezone(timezone.utc)


def _steady(zone: ZoneInfo, instant: datetime) -> bool:
    """True when the zone's offset is the same for :data:`_SHIFT` either side of ``instant``."""
    return (instant - _SHIFT).astimezone(zone).utcoffset() == (instant + _SHIFT).astimezone(zone).utcoffset()


def _exists(wall: datetime, zone: ZoneInfo) -> bool:
    """False for a wall time inside the gap of a spring-forward change."""
    return _instant(wall, zone, 0).astimezone(zone).replace(tzinfo=None) == wall
