"""Pruning old history (the built-in ``indexnow.prune_history`` job and CLI).

Rows go in bounded chunks, each its own short transaction: a first prune of
a large table neither holds a long lock nor builds a huge undo log, and the
web requests writing history meanwhile are never blocked for long. Finished
jobs (``completed``, ``failed`` or ``expired``) and the schedules' history
older than the same retention go too.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import sqlalchemy as sa

from .. import clock
from ..config import MAXIMA
from ..state import IndexNowState

logger = logging.getLogger(__name__)

#: Rows deleted per transaction.
CHUNK = 1000
#: The longest retention ``days`` may ask for: INDEXNOW_HISTORY_RETENTION_DAYS's own bound (a
#: cutoff millions of days back is before year 1, and the date arithmetic fails).
MAX_DAYS = int(MAXIMA["INDEXNOW_HISTORY_RETENTION_DAYS"][0])


@dataclass
class PruneResult:
    history: int = 0
    jobs: int = 0
    days: int | None = None
    schedule_runs: int = 0

    def __str__(self) -> str:
        if self.days is None:
            return "history retention is off (INDEXNOW_HISTORY_RETENTION_DAYS = None): nothing pruned"
        runs = f", {self.schedule_runs} schedule occurrence(s)" if self.schedule_runs else ""
        return (f"pruned {self.history} history row(s){runs} and {self.jobs} finished job(s) "
                f"older than {self.days} day(s)")


def prune_history(state: IndexNowState, days: int | None = None, *, chunk: int = CHUNK) -> PruneResult:
    """Delete history (and finished jobs) older than ``days`` (default INDEXNOW_HISTORY_RETENTION_DAYS)."""
    if days is None:
        days = state.settings.history_retention_days
    if days is None:
        return PruneResult()
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= MAX_DAYS:
        raise ValueError(f"days must be a whole number from 1 to {MAX_DAYS}, got {days!r}")
    if chunk < 1:
        raise ValueError(f"chunk must be at least 1, got {chunk!r}")
    cutoff = clock.utcnow() - timedelta(days=days)
    history = state.models.history
    jobs = state.models.job
    result = PruneResult(days=days)
    result.history = _delete_in_chunks(state, history, history.c.created_at < cutoff, chunk)
    result.jobs = _delete_in_chunks(
        state, jobs, sa.and_(jobs.c.status.in_(("completed", "failed", "expired")), jobs.c.finished_at < cutoff),
        chunk,
    )
    runs = state.models.schedule_run
    result.schedule_runs = _delete_in_chunks(state, runs, runs.c.created_at < cutoff, chunk)
    if result.history or result.jobs or result.schedule_runs:
        logger.info("IndexNow: %s", result)
    return result


def _delete_in_chunks(state: IndexNowState, table: sa.Table, condition: Any, chunk: int) -> int:
    """Select a chunk of ids, delete them, repeat: portable (MySQL cannot LIMIT a sub-select of IN)."""
    total = 0
    engine = state.engine()
    while True:
        with engine.begin() as connection:
            ids = list(connection.execute(sa.select(table.c.id).where(condition).limit(chunk)).scalars())
            if ids:
                connection.execute(sa.delete(table).where(table.c.id.in_(ids)))
        total += len(ids)
        if len(ids) < chunk:
            return total
