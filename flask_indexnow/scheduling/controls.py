"""The operator's controls: pause, resume (with or without catch-up), trigger.

Each is one short transaction on the schedule's row, exactly once however
many operators (or processes) act at the same moment:

- ``pause``/``resume`` flip ``enabled`` with a compare-and-set
  (``UPDATE … WHERE enabled = <the other value>``): one of several resumes
  wins, and only the winner dispatches the catch-up job, whose occurrence key
  (the first missed occurrence) is unique besides.
- ``trigger`` makes a job keyed ``name@trigger-after-<previous triggered job>``:
  two clicks made on the same state make the same key, and the unique
  ``occurrence_key`` lets one insert through. A click while a triggered job
  has not started yet returns that job instead of a second one.

A trigger and a catch-up count their ``expires`` from the moment the operator
acted: the operator asked for that run now.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from .. import clock
from ..errors import IndexNowError
from ..state import IndexNowState
from .dispatching import dispatch_for, occurrence_key
from .history import record
from .schedules import ScheduleInfo, by_name, next_run_after

logger = logging.getLogger(__name__)


class UnknownScheduleError(IndexNowError, LookupError):
    """No schedule has that name."""

    def __init__(self, name: str) -> None:
        super().__init__(f"no schedule named {name!r} (see `flask indexnow schedule list`)")
        self.name = name


@dataclass(frozen=True)
class ControlResult:
    """What a control did: the schedule after it, whether it changed anything, the job it made."""

    schedule: ScheduleInfo
    changed: bool
    job_id: int | None = None


def _row(connection: Any, state: IndexNowState, name: str, *, lock: bool = False) -> Any:
    table = state.models.schedule
    query = sa.select(table).where(by_name(table, name))
    row = connection.execute(query.with_for_update() if lock else query).first()
    if row is None:
        raise UnknownScheduleError(name)
    return row


def _info(state: IndexNowState, name: str) -> ScheduleInfo:
    with state.engine().connect() as connection:
        return ScheduleInfo.from_row(_row(connection, state, name))


def pause(state: IndexNowState, name: str) -> ControlResult:
    """No more occurrences of ``name`` are dispatched until it is resumed (jobs already made still run)."""
    table = state.models.schedule
    with state.engine().begin() as connection:
        row = _row(connection, state, name)
        changed = bool(connection.execute(
            sa.update(table).where(table.c.id == row.id, table.c.enabled.is_(True)).values(enabled=False)
        ).rowcount)
    if changed:
        logger.info("IndexNow: schedule %r paused", name)
    return ControlResult(_info(state, name), changed)


def resume(state: IndexNowState, name: str, *, catch_up: bool = False) -> ControlResult:
    """Dispatch ``name`` again from its next occurrence in the future.

    The occurrences missed while paused are dropped, or with ``catch_up``
    run once, now (when at least one was missed). Resuming a schedule that is
    not paused changes nothing.
    """
    table = state.models.schedule
    now = clock.utcnow()
    job_id: int | None = None
    with state.engine().begin() as connection:
        row = _row(connection, state, name, lock=True)
        if row.enabled:
            return ControlResult(ScheduleInfo.from_row(row), False)
        schedule_name = row.name or row.handler
        following = next_run_after(row.kind, row.expression, row.timezone, row.anchor or row.created_at, now)
        missed = row.next_run <= now
        values: dict[str, Any] = {"enabled": True, "next_run": following}
        if catch_up and missed:
            values["last_run"] = now
        won = connection.execute(
            sa.update(table).where(table.c.id == row.id, table.c.enabled.is_(False)).values(**values)
        ).rowcount
        if not won:
            return ControlResult(_info(state, name), False)  # another operator resumed it first
        if catch_up and missed:
            # The first missed occurrence's own key: unique, so it runs once even if raced.
            job_id = dispatch_for(state, connection, row, schedule_name,
                                  occurrence_key(schedule_name, row.next_run), now)
            record(connection, state, schedule_name, "dispatched", row.next_run, job_id)
    logger.info("IndexNow: schedule %r resumed%s", name, " with one catch-up run" if job_id else "")
    return ControlResult(_info(state, name), True, job_id)


def trigger(state: IndexNowState, name: str) -> ControlResult:
    """One job of ``name`` now, as its own occurrence (``triggered``); ``next_run``/``last_run`` untouched."""
    now = clock.utcnow()
    jobs, runs = state.models.job, state.models.schedule_run
    key: str | None = None
    try:
        with state.engine().begin() as connection:
            row = _row(connection, state, name, lock=True)
            schedule_name = row.name or row.handler
            previous = connection.execute(
                sa.select(runs.c.job_id, jobs.c.status, jobs.c.attempts)
                .select_from(runs.outerjoin(jobs, jobs.c.id == runs.c.job_id))
                .where(runs.c.schedule == schedule_name, runs.c.outcome.in_(("triggered", "expired")),
                       runs.c.job_id.is_not(None))
                .order_by(runs.c.id.desc()).limit(1)
            ).first()
            if previous is not None and previous.status == "pending" and previous.attempts == 0:
                return ControlResult(ScheduleInfo.from_row(row), False, previous.job_id)
            key = f"{schedule_name}@trigger-after-{previous.job_id if previous is not None else 0}"
            job_id = dispatch_for(state, connection, row, schedule_name, key, now)
            record(connection, state, schedule_name, "triggered", now, job_id)
    except sa.exc.IntegrityError:
        if key is None:
            raise
        # Another operator's trigger, made on the same state, went in first: that one is the run.
        with state.engine().connect() as connection:
            winner = connection.execute(sa.select(jobs.c.id).where(jobs.c.occurrence_key == key)).scalar()
        return ControlResult(_info(state, name), False, winner)
    logger.info("IndexNow: schedule %r triggered by hand: job %s", name, job_id)
    return ControlResult(_info(state, name), True, job_id)
