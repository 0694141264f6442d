"""The scheduler tick: turn due schedules into jobs, exactly once per occurrence.

Any number of processes may tick at the same time. Each due schedule is
advanced with a compare-and-set on the ``next_run`` it was read with
(``UPDATE … WHERE id = ? AND next_run = ?``): the database lets exactly one
transaction match, and that one inserts the job, in the same transaction.
The job's ``occurrence_key`` (``handler@due-time``) is unique, so even a
schedule edited in between cannot produce the same occurrence twice.

``next_run`` moves to the first occurrence after *now*, counted from the
schedule's own anchor (interval) or expression (cron): the cadence never
drifts, and a schedule that missed several occurrences during downtime runs
once, then carries on in the future.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from .. import clock
from ..delivery.breaker import CacheUnavailable
from ..missing import is_missing_table
from ..state import IndexNowState
from . import jobs
from .schedules import OverlapPolicy, ScheduleInfo, list_schedules, next_run_after, remove_schedule

logger = logging.getLogger(__name__)

_HEARTBEAT = "indexnow_scheduler_heartbeat"
#: The scheduler counts as active when it ticked this recently (it ticks about once a minute).
ACTIVE_WINDOW = 180.0


class Scheduler:
    """``indexnow.scheduler``: list, remove and tick the current app's schedules."""

    def __init__(self, state: IndexNowState) -> None:
        self.state = state

    def list(self) -> list[ScheduleInfo]:
        """Every schedule, by handler name."""
        return list_schedules(self.state)

    def remove(self, handler: str) -> bool:
        """Delete the schedule of ``handler``; False when there is none. Jobs already dispatched stay."""
        return remove_schedule(self.state, handler)

    def tick(self) -> int:
        """Dispatch a job for every due schedule; return how many jobs were dispatched."""
        return tick(self.state)


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
            logger.exception("IndexNow: schedule %r could not be evaluated", row.handler)
    beat(state)
    return dispatched


def _fire(state: IndexNowState, row: Any, now: datetime) -> int:
    """Advance one due schedule (compare-and-set) and dispatch its job; 1 if dispatched."""
    table = state.models.schedule
    job_table = state.models.job
    following = next_run_after(row.kind, row.expression, row.timezone, row.anchor or row.created_at,
                               max(now, row.next_run))
    policy = OverlapPolicy.coerce(row.overlap)
    key = f"{row.handler}@{clock.as_utc(row.next_run).isoformat()}"
    with state.engine().begin() as connection:
        busy = policy is not OverlapPolicy.ALLOW and connection.execute(
            sa.select(job_table.c.id)
            .where(job_table.c.handler == row.handler, job_table.c.status.in_(("pending", "processing")))
            .limit(1)
        ).first() is not None
        values: dict[str, Any] = {"next_run": following}
        if not (busy and policy is OverlapPolicy.BUFFER):
            values["last_run"] = now
        won = connection.execute(
            sa.update(table).where(table.c.id == row.id, table.c.next_run == row.next_run).values(**values)
        ).rowcount
        if not won:
            return 0  # another process dispatched this occurrence
        if busy:
            logger.info("IndexNow: schedule %r skipped (%s): its previous job is still pending or running",
                        row.handler, policy.value)
            return 0
        already = connection.execute(
            sa.select(job_table.c.id).where(job_table.c.occurrence_key == key)
        ).first()
        if already is not None:
            return 0
        jobs.dispatch(state, row.handler, row.payload, row.queue, connection=connection, occurrence_key=key)
    logger.info("IndexNow: schedule %r dispatched a job to queue %r; next run %s",
                row.handler, row.queue, following.isoformat())
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
