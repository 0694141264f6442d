"""Schedule rows: what a schedule is, when it next runs, and saving one.

A schedule's timing is either an interval (``kind = "interval"``, counted from
the row's ``anchor``) or a cron expression in a time zone (``kind = "cron"``).
A schedule's key is its ``name`` (default: its handler), so one handler can
have several schedules. Saving is an upsert by name that keeps ``next_run``
when the timing did not change, so an app that saves its schedules at every
start-up does not push them forward on each deploy.

Rows written before names existed have ``name`` NULL and read as their
handler (:func:`by_name`); :func:`fill_names` gives them one.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from .. import clock
from ..state import IndexNowState
from .cron import Cron
from .intervals import parse_duration, parse_interval

#: Longest handler, schedule and queue names the tables hold.
HANDLER_MAX = 191
NAME_MAX = 191
QUEUE_MAX = 100
#: Where a schedule came from, as ``origin`` stores it.
MANUAL, DECLARED, BUILTIN = "manual", "declared", "builtin"
#: The built-in handlers' names (their functions and intervals: builtins.py, which imports this module).
PROCESS_QUEUE = "indexnow.process_queue"
PRUNE_HISTORY = "indexnow.prune_history"
BUILTIN_NAMES = frozenset({PROCESS_QUEUE, PRUNE_HISTORY})
#: Characters no name may hold: PostgreSQL refuses NUL in text, and the others
#: would make a name that logs and the status page cannot show.
_CONTROL = frozenset(map(chr, [*range(0x20), 0x7F]))


def _has_control(text: str) -> bool:
    return not _CONTROL.isdisjoint(text)


class OverlapPolicy(str, enum.Enum):
    """What a due schedule does while its handler still has a pending or processing job."""

    #: Always dispatch a new job (the default).
    ALLOW = "allow"
    #: Dispatch nothing; ``next_run`` advances and ``last_run`` is set.
    SKIP = "skip"
    #: Dispatch nothing; ``next_run`` advances, ``last_run`` is left as it was.
    BUFFER = "buffer"

    @classmethod
    def coerce(cls, value: OverlapPolicy | str) -> OverlapPolicy:
        try:
            return cls(value.value if isinstance(value, OverlapPolicy) else str(value).lower())
        except ValueError:
            raise ValueError(f"unknown overlap policy {value!r}: use allow, skip or buffer") from None


def next_run_after(kind: str, expression: str, timezone: str | None, anchor: datetime, after: datetime) -> datetime:
    """A schedule's first run after ``after``: intervals count from ``anchor``, cron matches the clock.

    ``ValueError`` for a schedule that cannot be read.
    """
    if kind == "interval":
        return parse_interval(expression).first_after(anchor, after)
    if kind == "cron":
        return Cron.parse(expression, timezone).next_after(after)
    raise ValueError(f"unknown schedule kind {kind!r}")


@dataclass(frozen=True)
class ScheduleSpec:
    """A schedule about to be saved, already validated."""

    handler: str
    payload: Any
    queue: str
    kind: str
    expression: str
    timezone: str
    overlap: OverlapPolicy
    #: The schedule's key; "" means the handler.
    name: str = field(default="", kw_only=True)
    misfire_grace: str | None = field(default=None, kw_only=True)
    expires: str | None = field(default=None, kw_only=True)
    max_attempts: int | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        if not self.name:
            object.__setattr__(self, "name", self.handler)

    def options(self) -> dict[str, Any]:
        """The columns a save writes (the timing's ``anchor``/``next_run`` aside)."""
        return {
            "handler": self.handler, "payload": self.payload, "queue": self.queue, "kind": self.kind,
            "expression": self.expression, "timezone": self.timezone, "overlap": self.overlap.value,
            "misfire_grace": self.misfire_grace, "expires": self.expires, "max_attempts": self.max_attempts,
        }


@dataclass(frozen=True)
class ScheduleInfo(ScheduleSpec):
    """One schedule as stored (its spec, and when it runs); what :meth:`Scheduler.list` returns."""

    next_run: datetime
    last_run: datetime | None
    enabled: bool
    created_at: datetime
    #: "manual", "declared" or "builtin".
    origin: str = field(default=MANUAL, kw_only=True)
    #: A declared schedule no longer in the code (paused by sync).
    undeclared: bool = field(default=False, kw_only=True)

    @property
    def paused(self) -> bool:
        return not self.enabled

    @property
    def describe(self) -> str:
        """``"every 1 hour"`` or ``"cron 0 3 * * * (Europe/Rome)"``."""
        if self.kind == "cron":
            return f"cron {self.expression}" + ("" if self.timezone == "UTC" else f" ({self.timezone})")
        return f"every {self.expression}"

    @property
    def source(self) -> str:
        """Where it came from, for people: ``declared``, ``manual``, ``built-in`` (``undeclared`` when gone)."""
        if self.origin == DECLARED and self.undeclared:
            return "undeclared"
        return "built-in" if self.origin == BUILTIN else self.origin

    @classmethod
    def from_row(cls, row: Any) -> ScheduleInfo:
        return cls(
            handler=row.handler, payload=row.payload, queue=row.queue, kind=row.kind,
            expression=row.expression, timezone=row.timezone, overlap=OverlapPolicy.coerce(row.overlap),
            next_run=row.next_run, last_run=row.last_run, enabled=bool(row.enabled), created_at=row.created_at,
            name=row.name or row.handler, misfire_grace=row.misfire_grace, expires=row.expires,
            max_attempts=row.max_attempts, origin=_origin(row), undeclared=bool(row.undeclared),
        )


def _origin(row: Any) -> str:
    """Built-in rows written before ``origin`` existed say "manual": their handler tells."""
    if row.origin == MANUAL and row.handler in BUILTIN_NAMES and (row.name or row.handler) == row.handler:
        return BUILTIN
    return str(row.origin)


def storable_name(name: object) -> bool:
    """Whether a schedule (or a handler) could be called ``name``: a lookup of any other name finds nothing.

    Told apart before the query, so that a lookup of ``"a\\x00b"`` (which
    PostgreSQL refuses in any text, even a comparison) or of a name longer
    than the column answers "no such schedule" like any unknown name, not
    with a database error.
    """
    return isinstance(name, str) and 0 < len(name) <= max(NAME_MAX, HANDLER_MAX) and not _has_control(name)


def by_name(table: sa.Table, name: str) -> Any:
    """The WHERE clause of the schedule called ``name`` (a row from before names reads as its handler)."""
    if not storable_name(name):
        return sa.false()
    return sa.or_(table.c.name == name, sa.and_(table.c.name.is_(None), table.c.handler == name))


def fill_names(connection: Any, table: sa.Table) -> int:
    """Name the rows written before names existed after their handler (they were unique by it)."""
    return int(connection.execute(
        sa.update(table).where(table.c.name.is_(None)).values(name=table.c.handler)
    ).rowcount or 0)


def check_name(name: object) -> str:
    if not isinstance(name, str) or not name.strip() or len(name.strip()) > NAME_MAX:
        raise ValueError(f"a schedule name must be 1-{NAME_MAX} characters, got {name!r}")
    if _has_control(name.strip()):
        raise ValueError(f"a schedule name must not hold control characters (NUL, newline …), got {name!r}")
    return name.strip()


def check_duration(value: object, what: str) -> str:
    """``value`` as an interval text of fixed length (``"10 minutes"``); ``ValueError`` naming ``what``."""
    if not isinstance(value, str):
        raise ValueError(f"{what} must be an interval such as '10 minutes', got {value!r}")
    parse_duration(value, what)
    return value.strip()


def check_max_attempts(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1000:
        raise ValueError(f"max_attempts must be a whole number from 1 to 1000, got {value!r}")
    return value


def duration(text: str | None) -> timedelta | None:
    """A stored grace or expiry, read back (None: not set, or no longer readable)."""
    if not text:
        return None
    try:
        return parse_duration(text)
    except ValueError:
        return None


def check_handler(handler: object) -> str:
    if not isinstance(handler, str) or not handler.strip() or len(handler.strip()) > HANDLER_MAX:
        raise ValueError(f"a schedule needs a handler name of 1-{HANDLER_MAX} characters, got {handler!r}")
    if _has_control(handler.strip()):
        raise ValueError(f"a handler name must not hold control characters (NUL, newline …), got {handler!r}")
    return handler.strip()


def check_queue(queue: object) -> str:
    if not isinstance(queue, str) or not queue.strip() or len(queue.strip()) > QUEUE_MAX:
        raise ValueError(f"a queue name must be 1-{QUEUE_MAX} characters, got {queue!r}")
    if _has_control(queue.strip()):
        raise ValueError(f"a queue name must not hold control characters (NUL, newline …), got {queue!r}")
    return queue.strip()


def check_payload(payload: Any) -> Any:
    """Payloads are stored as JSON: refuse at once what JSON cannot hold (NaN and Infinity are not JSON:
    PostgreSQL refuses them, and other readers of the column would too).

    A lone surrogate (``"\\ud800"``) is a Python ``str`` but no Unicode text:
    ``json.dumps`` would write it as an escape that MariaDB's JSON check
    refuses (error 4025) and PostgreSQL's ``jsonb`` cannot convert, so the
    payload must encode as UTF-8 too.
    """
    try:
        text = json.dumps(payload, allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"the payload must be JSON-serialisable: {exc}") from None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"the payload must be JSON-serialisable Unicode text: {exc.object[exc.start:exc.end]!r} "
                         f"is a lone surrogate") from None
    return payload


def save_schedule(state: IndexNowState, spec: ScheduleSpec, *, origin: str = MANUAL) -> ScheduleInfo:
    """Insert or update the schedule called ``spec.name`` (saved by hand: enabled, origin ``manual``).

    A new schedule (or one whose timing changed) is anchored now and first
    comes due one interval later (cron: at its next match). Saving the same
    timing again keeps ``next_run``, ``last_run`` and the anchor.
    """
    extra = {"origin": origin, "undeclared": False, "enabled": True}
    return upsert_schedule(state, spec, lambda current: extra)


def upsert_schedule(state: IndexNowState, spec: ScheduleSpec,
                    decide: Callable[[Any], dict[str, Any] | None]) -> ScheduleInfo:
    """The upsert behind save and sync: ``decide(current_row_or_None)`` gives the extra columns.

    ``decide`` may return None to leave an existing row alone (sync meeting a
    schedule saved by hand); a key ``"_fresh"`` set true re-anchors the timing.
    """
    table = state.models.schedule
    engine = state.engine()
    now = clock.utcnow()
    values = spec.options()
    fresh = {"anchor": now, "next_run": next_run_after(spec.kind, spec.expression, spec.timezone, now, now)}
    for attempt in (1, 2):
        try:
            with engine.begin() as connection:
                current = connection.execute(
                    sa.select(table).where(by_name(table, spec.name)).with_for_update()
                ).first()
                extra = decide(current)
                if extra is not None:
                    extra = dict(extra)
                    refresh = extra.pop("_fresh", False)
                    if current is None:
                        connection.execute(sa.insert(table).values(
                            name=spec.name, created_at=now, **{"enabled": True, **values, **extra}, **fresh))
                    else:
                        same = _same_timing(current, spec) and not refresh
                        connection.execute(sa.update(table).where(table.c.id == current.id).values(
                            name=spec.name, **values, **extra, **({} if same else fresh)))
                row = connection.execute(sa.select(table).where(by_name(table, spec.name))).first()
            if row is None:
                raise LookupError(f"no schedule named {spec.name!r}")
            return ScheduleInfo.from_row(row)
        except sa.exc.IntegrityError as exc:
            if _old_handler_rule(exc):
                raise RuntimeError(
                    f"cannot save schedule {spec.name!r}: the schedules table still allows one schedule per "
                    "handler (made before named schedules); run `flask indexnow init-db` to bring it up to date"
                ) from None
            if attempt == 2:
                raise
            # Another process inserted the same name at the same moment: update it.
    raise AssertionError("unreachable")


def _old_handler_rule(exc: sa.exc.IntegrityError) -> bool:
    """True when the unique rule on ``handler`` of older tables refused a second schedule of a handler."""
    text = str(exc.orig).lower()
    return "handler" in text and "schedules_name" not in text and "schedules.name" not in text


def _same_timing(current: Any, spec: ScheduleSpec) -> bool:
    if current.kind != spec.kind:
        return False
    try:
        if spec.kind == "interval":
            return parse_interval(current.expression) == parse_interval(spec.expression)
        was, now = Cron.parse(current.expression, current.timezone), Cron.parse(spec.expression, spec.timezone)
        return (was.fields, was.timezone) == (now.fields, now.timezone)
    except ValueError:
        return False


def list_schedules(state: IndexNowState) -> list[ScheduleInfo]:
    table = state.models.schedule
    with state.engine().connect() as connection:
        found = [ScheduleInfo.from_row(r) for r in connection.execute(sa.select(table))]
    return sorted(found, key=lambda s: s.name)


def get_schedule(state: IndexNowState, name: str) -> ScheduleInfo | None:
    """The schedule called ``name``, or None."""
    table = state.models.schedule
    with state.engine().connect() as connection:
        row = connection.execute(sa.select(table).where(by_name(table, name))).first()
    return None if row is None else ScheduleInfo.from_row(row)


def remove_schedule(state: IndexNowState, name: str) -> bool:
    """Delete the schedule called ``name``; False when there was none. Its jobs and history stay."""
    table = state.models.schedule
    with state.engine().begin() as connection:
        return bool(connection.execute(sa.delete(table).where(by_name(table, name))).rowcount)
