"""Making the job of one occurrence: its unique key and the schedule's job options.

Shared by the tick and the operator's controls (catch-up, trigger), so a
job looks the same whoever made it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .. import clock
from ..state import IndexNowState
from . import jobs
from .schedules import duration


def occurrence_key(name: str, due: datetime) -> str:
    """The unique key of the occurrence of ``name`` due at ``due`` (``name@ISO time``)."""
    return f"{name}@{clock.as_utc(due).isoformat()}"


def dispatch_for(state: IndexNowState, connection: Any, row: Any, name: str, key: str, due: datetime) -> int:
    """The job of one occurrence of the schedule ``row`` (in ``connection``'s transaction); returns its id.

    It gets the schedule's ``max_attempts``, and with ``expires`` an expiry
    counted from ``due``.
    """
    expiry = duration(row.expires)
    return jobs.dispatch(
        state, row.handler, row.payload, row.queue, connection=connection, occurrence_key=key,
        max_attempts=row.max_attempts, expires_at=None if expiry is None else clock.as_utc(due) + expiry,
        schedule=name,
    )
