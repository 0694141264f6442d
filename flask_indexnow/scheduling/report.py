"""The schedules as the status page and ``status.json`` show them: each with its newest occurrence.

Two queries whatever the number of schedules: the schedules (soonest first),
and their newest occurrences with their jobs (:func:`.history.latest`).
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from ..state import IndexNowState
from .history import Occurrence, latest
from .schedules import ScheduleInfo

#: Schedules listed (soonest first); more than this is not a page anyone reads.
LIMIT = 100


def schedule_entries(state: IndexNowState, connection: Any, limit: int = LIMIT
                     ) -> list[tuple[ScheduleInfo, Occurrence | None]]:
    """(schedule, its newest occurrence or None), soonest next run first."""
    table = state.models.schedule
    found = [ScheduleInfo.from_row(row) for row in connection.execute(
        sa.select(table).order_by(table.c.next_run, table.c.id).limit(limit))]
    last = latest(state, [s.name for s in found], connection=connection)
    return [(s, last.get(s.name)) for s in found]


def schedules_json(state: IndexNowState, connection: Any) -> list[dict[str, Any]]:
    """The ``schedules`` member of the status document."""
    return [
        {
            "name": s.name, "handler": s.handler, "when": s.describe, "queue": s.queue,
            "paused": s.paused, "source": s.source, "next_run": s.next_run.isoformat(),
            "last_run": None if s.last_run is None else s.last_run.isoformat(),
            "last": None if last is None else last.as_dict(),
        }
        for s, last in schedule_entries(state, connection)
    ]
