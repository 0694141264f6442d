"""Schedule rows: what a schedule is, when it next runs, and saving one.

A schedule's timing is either an interval (``kind = "interval"``, counted from
the row's ``anchor``) or a cron expression in a time zone (``kind = "cron"``).
Saving is an upsert by handler that keeps ``next_run`` when the timing did not
change, so an app that declares its schedules at every start-up does not push
them forward on each deploy.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from .. import clock
from ..state import IndexNowState
from .cron import Cron
from .intervals import parse_interval

#: Longest handler and queue names the tables hold.
HANDLER_MAX = 191
QUEUE_MAX = 100
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


@dataclass(frozen=True)
class ScheduleInfo(ScheduleSpec):
    """One schedule as stored (its spec, and when it runs); what :meth:`Scheduler.list` returns."""

    next_run: datetime
    last_run: datetime | None
    enabled: bool
    created_at: datetime

    @property
    def describe(self) -> str:
        """``"every 1 hour"`` or ``"cron 0 3 * * * (Europe/Rome)"``."""
        if self.kind == "cron":
            return f"cron {self.expression}" + ("" if self.timezone == "UTC" else f" ({self.timezone})")
        return f"every {self.expression}"

    @classmethod
    def from_row(cls, row: Any) -> ScheduleInfo:
        return cls(
            handler=row.handler, payload=row.payload, queue=row.queue, kind=row.kind,
            expression=row.expression, timezone=row.timezone, overlap=OverlapPolicy.coerce(row.overlap),
            next_run=row.next_run, last_run=row.last_run, enabled=bool(row.enabled), created_at=row.created_at,
        )


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
    PostgreSQL refuses them, and other readers of the column would too)."""
    try:
        json.dumps(payload, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"the payload must be JSON-serialisable: {exc}") from None
    return payload



def save_schedule(state: IndexNowState, spec: ScheduleSpec) -> ScheduleInfo:
    """Insert or update the schedule of ``spec.handler``.

    A new schedule (or one whose timing changed) is anchored now and first
    comes due one interval later (cron: at its next match). Saving the same
    timing again keeps ``next_run``, ``last_run`` and the anchor.
    """
    table = state.models.schedule
    engine = state.engine()
    now = clock.utcnow()
    values = {
        "payload": spec.payload, "queue": spec.queue, "kind": spec.kind, "expression": spec.expression,
        "timezone": spec.timezone, "overlap": spec.overlap.value, "enabled": True,
    }
    fresh = {"anchor": now, "next_run": next_run_after(spec.kind, spec.expression, spec.timezone, now, now)}
    for attempt in (1, 2):
        try:
            with engine.begin() as connection:
                current = connection.execute(
                    sa.select(table.c.id, table.c.kind, table.c.expression, table.c.timezone)
                    .where(table.c.handler == spec.handler)
                    .with_for_update()
                ).first()
                if current is None:
                    connection.execute(sa.insert(table).values(handler=spec.handler, created_at=now, **values, **fresh))
                else:
                    same = _same_timing(current, spec)
                    connection.execute(
                        sa.update(table).where(table.c.id == current.id).values(**values, **({} if same else fresh))
                    )
                row = connection.execute(sa.select(table).where(table.c.handler == spec.handler)).one()
            return ScheduleInfo.from_row(row)
        except sa.exc.IntegrityError:
            if attempt == 2:
                raise
            # Another process inserted the same handler at the same moment: update it.
    raise AssertionError("unreachable")


def _same_timing(current: Any, spec: ScheduleSpec) -> bool:
    if current.kind != spec.kind:
        return False
    try:
        if spec.kind == "interval":
            return parse_interval(current.expression) == parse_interval(spec.expression)
        return Cron.parse(current.expression, current.timezone) == Cron.parse(spec.expression, spec.timezone)
    except ValueError:
        return False


def list_schedules(state: IndexNowState) -> list[ScheduleInfo]:
    table = state.models.schedule
    with state.engine().connect() as connection:
        return [ScheduleInfo.from_row(r) for r in connection.execute(sa.select(table).order_by(table.c.handler))]


def remove_schedule(state: IndexNowState, handler: str) -> bool:
    """Delete the schedule of ``handler``; False when there was none. Its jobs stay."""
    table = state.models.schedule
    with state.engine().begin() as connection:
        return bool(connection.execute(sa.delete(table).where(table.c.handler == handler)).rowcount)
