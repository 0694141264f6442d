"""The scheduler tick: turn due schedules into jobs, exactly once per occurrence.

Any number of processes may tick at the same time. Each due schedule is
advanced with a compare-and-set on the ``next_run`` it was read with
(``UPDATE … WHERE id = ? AND next_run = ?``): the database lets exactly one
transaction match, and that one inserts the job, in the same transaction.
The job's ``occurrence_key`` (``name@due-time``) is unique, so even a
schedule edited in between cannot produce the same occurrence twice.

``next_run`` moves to the first occurrence after *now*, counted from the
schedule's own anchor (interval) or expression (cron): the cadence never
drifts, and a schedule that missed several occurrences during downtime runs
once, then carries on in the future. With a misfire grace, an occurrence
found later than the grace is not run (recorded ``missed``); the latest one
still within the grace, if any, runs instead.

Each decision is written to the schedule's history (:mod:`.history`) in the
transaction that made it.
"""

from __future__ import annotations

import builtins
import logging
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from .. import clock
from ..breaker import CacheUnavailable
from ..missing import is_missing_table
from ..state import IndexNowState
from . import controls
from .dispatching import dispatch_for, occurrence_key
from .history import Occurrence, history, last_outcomes, record
from .schedules import (
    OverlapPolicy,
    ScheduleInfo,
    duration,
    get_schedule,
    list_schedules,
    next_run_after,
    remove_schedule,
)
from .sync import SyncResult, sync

logger = logging.getLogger(__name__)

_HEARTBEAT = "indexnow_scheduler_heartbeat"
#: The scheduler counts as active when it ticked this recently (it ticks about once a minute).
ACTIVE_WINDOW = 180.0


class Scheduler:
    """``indexnow.scheduler``: list, steer and tick the current app's schedules, by name."""

    def __init__(self, state: IndexNowState) -> None:
        self.state = state

    def list(self) -> list[ScheduleInfo]:
        """Every schedule, by name."""
        return list_schedules(self.state)

    def get(self, name: str) -> ScheduleInfo | None:
        """The schedule called ``name``, or None."""
        return get_schedule(self.state, name)

    def remove(self, name: str) -> bool:
        """Delete the schedule called ``name``; False when there is none. Jobs already dispatched stay."""
        return remove_schedule(self.state, name)

    def tick(self) -> int:
        """Dispatch a job for every due schedule; return how many jobs were dispatched."""
        return tick(self.state)

    def pause(self, name: str) -> controls.ControlResult:
        """Stop dispatching ``name`` until :meth:`resume`; ``UnknownScheduleError`` for a name not stored."""
        return controls.pause(self.state, name)

    def resume(self, name: str, catch_up: bool = False) -> controls.ControlResult:
        """Dispatch ``name`` again: from its next occurrence, or (``catch_up``) with one run for what was missed."""
        return controls.resume(self.state, name, catch_up=catch_up)

    def trigger(self, name: str) -> controls.ControlResult:
        """One job of ``name`` now, its own occurrence; ``next_run``/``last_run`` untouched.

        Exactly once: while a triggered job has not started yet, triggering
        again (another operator's click) returns that job instead of a second one.
        """
        return controls.trigger(self.state, name)

    def sync(self) -> SyncResult:
        """Store every declared schedule; pause (``undeclared``) the declared ones no longer declared."""
        return sync(self.state)

    def history(self, name: str, limit: int = 20) -> builtins.list[Occurrence]:
        """The last ``limit`` occurrences of ``name``, newest first, each with its ``outcome`` and job result."""
        if get_schedule(self.state, name) is None and not history(self.state, name, 1):
            raise controls.UnknownScheduleError(name)
        return history(self.state, name, limit)

    def last_outcomes(self) -> dict[str, str]:
        """Schedule name → the outcome of its newest occurrence."""
        return last_outcomes(self.state)


def tick(state: IndexNowState) -> int:
    """See :meth:`Scheduler.tick`."""
    table = state.models.schedule
    now = clock.utcnow()
    with state.engine().connect() as connection:
        due = connection.execute(
            sa.select(table)
            .where(table.c.enabled.is_(True), table.c.next_run <= now)
            .order_by(table.c.next_run, table.c.id)
        ).all()
    dispatched = 0
    for row in due:
        try:
            dispatched += _fire(state, row, now)
        except Exception:  # one broken schedule never stops the others
            logger.exception("IndexNow: schedule %r could not be evaluated", row.name or row.handler)
    beat(state)
    return dispatched


def _to_run(row: Any, anchor: datetime, now: datetime) -> tuple[datetime | None, datetime | None]:
    """(the occurrence to run or None, the occurrence recorded ``missed`` or None).

    Without a grace: the stored ``next_run``, however late (once after downtime).
    With one: when ``next_run`` is later than the grace, it is missed, and the
    first occurrence within the grace (``>= now - grace``, ``<= now``) runs, if any.
    """
    grace = duration(row.misfire_grace)
    if grace is None or now - row.next_run <= grace:
        return row.next_run, None
    within = next_run_after(row.kind, row.expression, row.timezone, anchor,
                            now - grace - timedelta(microseconds=1))
    return (within if within <= now else None), row.next_run


def _fire(state: IndexNowState, row: Any, now: datetime) -> int:
    """Advance one due schedule (compare-and-set) and dispatch its job; 1 if dispatched."""
    table = state.models.schedule
    job_table = state.models.job
    name = row.name or row.handler
    anchor = row.anchor or row.created_at
    following = next_run_after(row.kind, row.expression, row.timezone, anchor, max(now, row.next_run))
    due, missed = _to_run(row, anchor, now)
    policy = OverlapPolicy.coerce(row.overlap)
    key = None if due is None else occurrence_key(name, due)
    with state.engine().begin() as connection:
        mine = sa.or_(job_table.c.schedule == name,
                      sa.and_(job_table.c.schedule.is_(None), job_table.c.handler == row.handler))
        busy = due is not None and policy is not OverlapPolicy.ALLOW and connection.execute(
            sa.select(job_table.c.id)
            .where(mine, job_table.c.status.in_(("pending", "processing")))
            .limit(1)
        ).first() is not None
        values: dict[str, Any] = {"next_run": following}
        if due is not None and not (busy and policy is OverlapPolicy.BUFFER):
            values["last_run"] = now
        won = connection.execute(
            sa.update(table).where(table.c.id == row.id, table.c.next_run == row.next_run).values(**values)
        ).rowcount
        if not won:
            return 0  # another process dispatched this occurrence
        if missed is not None:
            record(connection, state, name, "missed", missed)
            logger.warning("IndexNow: schedule %r missed its run due %s (later than its misfire grace %s)",
                           name, clock.as_utc(missed).isoformat(), row.misfire_grace)
        if due is None or key is None:
            return 0
        if busy:
            record(connection, state, name, "skipped", due)
            logger.info("IndexNow: schedule %r skipped (%s): its previous job is still pending or running",
                        name, policy.value)
            return 0
        already = connection.execute(
            sa.select(job_table.c.id).where(job_table.c.occurrence_key == key)
        ).first()
        if already is not None:
            return 0
        job_id = dispatch_for(state, connection, row, name, key, due)
        record(connection, state, name, "dispatched", due, job_id)
    logger.info("IndexNow: schedule %r dispatched a job to queue %r; next run %s",
                name, row.queue, following.isoformat())
    return 1


def beat(state: IndexNowState) -> None:
    """Record in the cache that schedules were just evaluated."""
    try:
        state.guarded_cache.set(state.cache_key(_HEARTBEAT), clock.utcnow().timestamp(),
                                timeout=int(ACTIVE_WINDOW * 2))
    except CacheUnavailable:
        pass  # the breaker has logged it


def scheduler_active(state: IndexNowState) -> bool:
    """Whether schedules were evaluated in the last few minutes (by ``work`` or ``schedule run``).

    The cache heartbeat answers when the cache is shared (Redis); otherwise a
    schedule that fired recently proves it, since the built-in
    ``indexnow.process_queue`` fires every minute.
    """
    now = clock.utcnow()
    try:
        stamp = state.guarded_cache.get(state.cache_key(_HEARTBEAT))
        if stamp is not None and now.timestamp() - float(stamp) <= ACTIVE_WINDOW:
            return True
    except CacheUnavailable:
        pass  # the breaker has logged it; the schedules table answers
    except (TypeError, ValueError):
        logger.warning("IndexNow: could not read the scheduler heartbeat", exc_info=True)
    table = state.models.schedule
    try:
        with state.engine().connect() as connection:
            latest = connection.execute(sa.select(sa.func.max(table.c.last_run))).scalar()
    except Exception as exc:
        if is_missing_table(exc):  # the caller reports it, in one line
            return False
        logger.warning("IndexNow: could not read the schedules", exc_info=True)
        return False
    return latest is not None and clock.as_utc(latest) >= now - timedelta(seconds=ACTIVE_WINDOW)
