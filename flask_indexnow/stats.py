"""The numbers behind ``flask indexnow status``, ``status.json`` and the status page.

Each function takes an open connection and runs one or two set-based
queries, so the page costs a fixed handful of queries however large the
tables grow.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from . import clock
from .checks import run_checks
from .engines import queue_engines
from .keys.keystate import KEY_STATES, host_key_states
from .scheduling import scheduler_active as worker_seen
from .sqlutil import dialect_name
from .state import IndexNowState
from .verify.verdict import SKIPPED

QUEUE_STATUSES = ("pending", "processing", "failed")
HISTORY_STATUSES = ("success", "retry", "failed", "dry_run", "skipped")
JOB_STATUSES = ("pending", "processing", "completed", "failed", "expired")
#: Hours of deliveries the status page charts.
CHART_HOURS = 72


def queue_counts(state: IndexNowState, connection: Any) -> dict[str, Any]:
    """The queue by status, due now or waiting, and how long the oldest due row has waited.

    What waits in the inbox (queued inside the site's transactions, merged by
    the next pass) is pending, one row per engine as the merge will write it:
    ``inbox`` says how many such events there are (a URL saved twice before
    the merge counts twice until then).
    """
    queue = state.models.queue
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
    waiting, waiting_due, waiting_oldest = inbox_counts(state, connection, now)
    per_event = len(queue_engines(state))
    counts["pending"] += waiting * per_event
    due_now = int(due_now) + waiting_due * per_event
    found = [clock.as_utc(when) for when in (oldest, waiting_oldest) if when is not None]
    return {
        **counts,
        "total": sum(counts.values()),
        "due_now": due_now,
        "waiting": counts["pending"] - due_now,
        "oldest_due_age_seconds": round((now - min(found)).total_seconds(), 1) if found else None,
        "inbox": waiting,
    }


def inbox_counts(state: IndexNowState, connection: Any, now: datetime) -> tuple[int, int, datetime | None]:
    """Events in the inbox, those of them due by ``now``, and the earliest due one's time, in one query."""
    inbox = state.models.inbox
    due = inbox.c.available_at <= now
    total, due_count, oldest = connection.execute(sa.select(
        sa.func.count(), sa.func.count(sa.case((due, 1))), sa.func.min(sa.case((due, inbox.c.available_at))),
    )).one()
    return int(total), int(due_count), None if oldest is None else clock.as_utc(oldest)


def history_counts(state: IndexNowState, connection: Any, hours: int = 24) -> dict[str, int]:
    history = state.models.history
    since = clock.utcnow() - timedelta(hours=hours)
    counts = dict.fromkeys(HISTORY_STATUSES, 0)
    for status, count in connection.execute(
        sa.select(history.c.status, sa.func.count()).where(history.c.created_at >= since).group_by(history.c.status)
    ):
        counts[status] = int(count)
    return counts


def skipped_counts(state: IndexNowState, connection: Any, hours: int = 24) -> dict[str, int]:
    """URLs not sent because their page is not indexable (INDEXNOW_VERIFY), by verdict, in one query.

    The verdict is the start of the history row's error (``"noindex: meta robots"``).
    """
    history = state.models.history
    since = clock.utcnow() - timedelta(hours=hours)
    counts = connection.execute(
        sa.select(*(sa.func.sum(sa.case((history.c.error.like(f"{reason}:%"), 1), else_=0)) for reason in SKIPPED))
        .where(history.c.status == "skipped", history.c.created_at >= since)
    ).one()
    return {reason: int(count or 0) for reason, count in zip(SKIPPED, counts)}


def job_counts(state: IndexNowState, connection: Any) -> dict[str, int]:
    """Jobs by status, and how many schedules exist and are enabled."""
    jobs = state.models.job
    schedules = state.models.schedule
    counts = dict.fromkeys(JOB_STATUSES, 0)
    for status, count in connection.execute(sa.select(jobs.c.status, sa.func.count()).group_by(jobs.c.status)):
        counts[status] = int(count)
    total, enabled = connection.execute(
        sa.select(sa.func.count(), sa.func.sum(sa.case((schedules.c.enabled.is_(True), 1), else_=0)))
    ).one()
    return {**counts, "schedules": int(total), "schedules_enabled": int(enabled or 0)}


def _hour_bucket(connection: Any, column: Any) -> Any:
    """``column`` truncated to the hour as 'YYYY-MM-DD HH' text, on each database.

    The format is a literal, not a parameter, so GROUP BY repeats the very same
    expression (PostgreSQL and MySQL compare them textually).
    """
    dialect = dialect_name(connection)
    if dialect == "postgresql":
        return sa.func.to_char(column, sa.literal_column("'YYYY-MM-DD HH24'"))
    if dialect == "mysql":
        return sa.func.date_format(column, sa.literal_column("'%Y-%m-%d %H'"))
    return sa.func.strftime(sa.literal_column("'%Y-%m-%d %H'"), column)


def deliveries_per_hour(state: IndexNowState, connection: Any, hours: int = CHART_HOURS) -> list[dict[str, Any]]:
    """History rows per hour and status over the last ``hours`` hours, oldest first.

    Every hour is listed, empty ones with zeros, so a chart needs no gap logic.
    """
    history = state.models.history
    now = clock.utcnow()
    first = now.replace(minute=0, second=0, microsecond=0) - timedelta(hours=hours - 1)
    bucket = _hour_bucket(connection, history.c.created_at).label("hour")
    found: dict[str, dict[str, int]] = {}
    for hour, status, count in connection.execute(
        sa.select(bucket, history.c.status, sa.func.count())
        .where(history.c.created_at >= first)
        .group_by(bucket, history.c.status)
    ):
        found.setdefault(str(hour), {})[status] = int(count)
    series = []
    for index in range(hours):
        start: datetime = first + timedelta(hours=index)
        counts = found.get(start.strftime("%Y-%m-%d %H"), {})
        series.append({"hour": start.isoformat(), **{s: counts.get(s, 0) for s in HISTORY_STATUSES}})
    return series


def collect_status(
    state: IndexNowState, *, scheduler_active: bool | None = None, connection: Any = None
) -> dict[str, Any]:
    """Every count the status page shows, as plain data (JSON-ready).

    ``scheduler_active`` defaults to what the scheduler's heartbeat says.
    """
    if scheduler_active is None:
        scheduler_active = worker_seen(state)
    if connection is None:
        with state.engine().connect() as own:
            return collect_status(state, scheduler_active=scheduler_active, connection=own)
    hosts = host_key_states(state, connection)
    return {
        "enabled": state.settings.enabled,
        "dry_run": state.settings.dry_run,
        "dry_run_reason": state.settings.implied_dry_run,
        "queue": queue_counts(state, connection),
        "history_24h": history_counts(state, connection),
        "skipped_24h": skipped_counts(state, connection),
        "jobs": job_counts(state, connection),
        "key_states": {name: sum(1 for h in hosts if h.state == name) for name in KEY_STATES},
        "hosts": [h.as_dict() for h in hosts],
        "deliveries_per_hour": deliveries_per_hour(state, connection),
        "checks": [c.as_dict() for c in run_checks(state, scheduler_active=scheduler_active)],
        "generated_at": clock.utcnow().isoformat(),
    }
