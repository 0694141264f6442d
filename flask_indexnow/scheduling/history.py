"""A schedule's memory: what became of each occurrence, and of the job it made.

Every occurrence the tick (or an operator) handles leaves one row in
``indexnow_schedule_runs``, written in the transaction that decided it:

- ``dispatched``: a job was made for it;
- ``skipped``: the overlap policy held it back (the previous job still ran);
- ``missed``: found later than the schedule's misfire grace, not run;
- ``triggered``: run now by hand (``scheduler.trigger``), outside the timing;
- ``expired``: its job was not started before the schedule's ``expires``.

The job's result (status, duration, error) is read with it, from the job's
own row, so a failure is never silent. Rows are pruned with the URL history.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from .. import clock
from ..state import IndexNowState
from .schedules import storable_name

OUTCOMES = ("dispatched", "skipped", "missed", "triggered", "expired")


@dataclass(frozen=True)
class Occurrence:
    """One occurrence of a schedule, newest first in :func:`history`."""

    schedule: str
    outcome: str
    due_at: datetime
    recorded_at: datetime
    job_id: int | None
    #: The job's status (pending, processing, completed, failed, expired); None without a job (or pruned).
    job_status: str | None
    attempts: int | None
    started_at: datetime | None
    finished_at: datetime | None
    error: str | None

    @property
    def duration(self) -> float | None:
        """Seconds the job's last attempt took, once it finished."""
        if self.started_at is None or self.finished_at is None:
            return None
        return max(0.0, (self.finished_at - self.started_at).total_seconds())

    @property
    def result(self) -> str:
        """The job's status, ``-`` when there is no job to speak of."""
        return self.job_status or "-"

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready (``status.json``)."""
        return {
            "outcome": self.outcome, "due_at": self.due_at.isoformat(), "job_id": self.job_id,
            "result": self.job_status, "duration_seconds": self.duration, "error": self.error,
        }


def record(connection: Any, state: IndexNowState, schedule: str, outcome: str, due_at: datetime,
           job_id: int | None = None) -> None:
    """Write one occurrence (in the caller's transaction, the one that decided it)."""
    if outcome not in OUTCOMES:
        raise ValueError(f"unknown schedule outcome {outcome!r}")
    connection.execute(sa.insert(state.models.schedule_run).values(
        schedule=schedule, outcome=outcome, due_at=due_at, job_id=job_id, created_at=clock.utcnow()))


def _select(state: IndexNowState) -> Any:
    runs, jobs = state.models.schedule_run, state.models.job
    return sa.select(
        runs.c.schedule, runs.c.outcome, runs.c.due_at, runs.c.created_at, runs.c.job_id, jobs.c.status,
        jobs.c.attempts, jobs.c.started_at, jobs.c.finished_at, jobs.c.last_error,
    ).select_from(runs.outerjoin(jobs, jobs.c.id == runs.c.job_id))


def _occurrence(row: Any) -> Occurrence:
    return Occurrence(
        schedule=row.schedule, outcome=row.outcome, due_at=row.due_at, recorded_at=row.created_at,
        job_id=row.job_id, job_status=row.status, attempts=row.attempts, started_at=row.started_at,
        finished_at=row.finished_at, error=row.last_error,
    )


def history(state: IndexNowState, name: str, limit: int = 20, *, connection: Any = None) -> list[Occurrence]:
    """The last ``limit`` occurrences of the schedule called ``name``, newest first."""
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"limit must be a whole number of at least 1, got {limit!r}")
    if not storable_name(name):
        return []  # no schedule can be called that (see schedules.storable_name)
    if connection is None:
        with state.engine().connect() as own:
            return history(state, name, limit, connection=own)
    runs = state.models.schedule_run
    query = _select(state).where(runs.c.schedule == name).order_by(runs.c.id.desc()).limit(limit)
    return [_occurrence(row) for row in connection.execute(query)]


def latest(state: IndexNowState, names: list[str] | None = None, *, connection: Any = None) -> dict[str, Occurrence]:
    """The newest occurrence of each stored schedule (of ``names``, or of all), by schedule name.

    One query, as cheap with a year of history as with a day's: for each
    schedule, its newest run is one descent of the (schedule, id) index (a
    GROUP BY over the runs would read every one of them), and the rows found
    are joined to their jobs (benchmark figure 11).
    """
    if connection is None:
        with state.engine().connect() as own:
            return latest(state, names, connection=own)
    if names is not None and not names:
        return {}
    runs, schedules = state.models.schedule_run, state.models.schedule
    newest_run = runs.alias("newest_run")
    name = sa.func.coalesce(schedules.c.name, schedules.c.handler)
    # ORDER BY id DESC LIMIT 1, not max(id): MariaDB reads a correlated max() over every
    # index entry of the schedule, but stops at the first with a LIMIT.
    newest = (sa.select(newest_run.c.id).where(newest_run.c.schedule == name)
              .order_by(newest_run.c.id.desc()).limit(1).correlate(schedules).scalar_subquery())
    ids = sa.select(newest.label("id")).select_from(schedules)
    if names is not None:
        ids = ids.where(name.in_(names))
    # A join to the (few) ids, not "id IN (…)": MariaDB would test every run against the list.
    found = ids.subquery("newest_ids")
    query = _select(state).join(found, found.c.id == runs.c.id)
    return {row.schedule: _occurrence(row) for row in connection.execute(query)}


def last_outcomes(state: IndexNowState, *, connection: Any = None) -> dict[str, str]:
    """Schedule name → the outcome of its newest occurrence (for ``indexnow_schedule_last_outcome``)."""
    return {name: occurrence.outcome for name, occurrence in latest(state, connection=connection).items()}
