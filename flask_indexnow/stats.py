"""The numbers behind ``flask indexnow status``, ``status.json`` and the status page."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import sqlalchemy as sa

from . import clock
from .checks import run_checks
from .state import IndexNowState

QUEUE_STATUSES = ("pending", "processing", "failed")
HISTORY_STATUSES = ("success", "retry", "failed", "dry_run")


def queue_counts(state: IndexNowState, connection: Any) -> dict[str, Any]:
    queue = state.models.Queue.__table__
    now = clock.utcnow()
    counts = dict.fromkeys(QUEUE_STATUSES, 0)
    for status, count in connection.execute(
        sa.select(queue.c.status, sa.func.count()).group_by(queue.c.status)
    ):
        counts[status] = int(count)
    due_now, oldest = connection.execute(
        sa.select(sa.func.count(), sa.func.min(queue.c.available_at)).where(
            queue.c.status == "pending", queue.c.available_at <= now
        )
    ).one()
    return {
        **counts,
        "total": sum(counts.values()),
        "due_now": int(due_now),
        "waiting": counts["pending"] - int(due_now),
        "oldest_due_age_seconds": None if oldest is None else round((now - clock.as_utc(oldest)).total_seconds(), 1),
    }


def history_counts(state: IndexNowState, connection: Any, hours: int = 24) -> dict[str, int]:
    history = state.models.History.__table__
    since = clock.utcnow() - timedelta(hours=hours)
    counts = dict.fromkeys(HISTORY_STATUSES, 0)
    for status, count in connection.execute(
        sa.select(history.c.status, sa.func.count()).where(history.c.created_at >= since).group_by(history.c.status)
    ):
        counts[status] = int(count)
    return counts


def collect_status(state: IndexNowState, *, scheduler_active: bool | None = None) -> dict[str, Any]:
    """Every count the status page shows, as plain data (JSON-ready)."""
    with state.engine().connect() as connection:
        queue = queue_counts(state, connection)
        history = history_counts(state, connection)
    return {
        "enabled": state.settings.enabled,
        "dry_run": state.settings.dry_run,
        "queue": queue,
        "history_24h": history,
        "checks": [c.as_dict() for c in run_checks(state, scheduler_active=scheduler_active)],
        "generated_at": clock.utcnow().isoformat(),
    }
