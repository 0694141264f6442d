"""Everything one scrape exports, read at once from the database and the shared cache, as plain data.

Nothing here is kept between scrapes or per process: the numbers are the
same whichever process answers, and right with any number of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from .. import clock, engines, totals
from ..checks import run_checks
from ..delivery import budget, worker
from ..scheduling import scheduler_active
from ..state import IndexNowState
from ..stats import JOB_STATUSES
from . import counts

#: The delivery statuses every configured engine exports, zero until they happen, so ``rate()`` sees the first.
DELIVERY_STATUSES = ("success", "retry", "failed", "skipped", "dry_run")

#: What a schedule's occurrence may come to (the schedules' history, where there is one).
SCHEDULE_OUTCOMES = ("dispatched", "skipped", "missed", "triggered", "expired")

#: (labels, value) of one sample.
Sample = tuple[tuple[str, ...], float]


@dataclass
class Snapshot:
    """One scrape's values, each a list of (label values, value) in a fixed order."""

    queue_urls: list[Sample] = field(default_factory=list)  # (status, engine)
    oldest_due_age: list[Sample] = field(default_factory=list)  # (engine,)
    deliveries: list[Sample] = field(default_factory=list)  # (status, engine)
    last_success: list[Sample] = field(default_factory=list)  # (engine,)
    paused: list[Sample] = field(default_factory=list)  # (engine,)
    budget_remaining: list[Sample] = field(default_factory=list)  # (engine,)
    jobs: list[Sample] = field(default_factory=list)  # (status, queue)
    schedule_next_run: list[Sample] = field(default_factory=list)  # (schedule,)
    schedule_last_outcome: list[Sample] = field(default_factory=list)  # (schedule, outcome)
    checks: list[Sample] = field(default_factory=list)  # (check,)


def read_snapshot(state: IndexNowState) -> Snapshot:
    """Read every value of a scrape: a handful of indexed queries on one connection, then the cache."""
    snapshot = Snapshot()
    with state.engine().connect() as connection:
        _queue(state, connection, snapshot)
        _deliveries(state, connection, snapshot)
        _jobs(state, connection, snapshot)
        _schedules(state, connection, snapshot)
    _engines(state, snapshot)
    active = scheduler_active(state)
    snapshot.checks = [((check.name,), 1.0 if check.ok else 0.0)
                       for check in run_checks(state, scheduler_active=active)]
    return snapshot


def _queue(state: IndexNowState, connection: Any, snapshot: Snapshot) -> None:
    for found in counts.engine_queues(state, connection):
        for status, count in found.counts.items():
            snapshot.queue_urls.append(((status, found.endpoint), float(count)))
        snapshot.oldest_due_age.append(((found.endpoint,), found.oldest_due_age_seconds))


def _deliveries(state: IndexNowState, connection: Any, snapshot: Snapshot) -> None:
    """The totals table, with a zero for every configured engine's usual statuses.

    The last success is 0 for a configured engine that never succeeded,
    rather than absent: ``time() - indexnow_last_success_timestamp_seconds``
    is then huge, so "no success for an hour" fires for an engine that never
    worked, where an absent series would keep the alert silent.
    """
    configured = engines.endpoints(state)
    values: dict[tuple[str, str], float] = {
        (status, endpoint): 0.0 for endpoint in configured for status in DELIVERY_STATUSES
    }
    last_success: dict[str, float] = dict.fromkeys(configured, 0.0)
    for engine, status, count, last_at in totals.read(connection, state.models.totals):
        values[(status, engine)] = float(count)
        if status == "success":
            last_success[engine] = last_at.timestamp()
    snapshot.deliveries = sorted(values.items(), key=lambda item: (item[0][1], item[0][0]))
    snapshot.last_success = [((engine,), stamp) for engine, stamp in sorted(last_success.items())]


def _jobs(state: IndexNowState, connection: Any, snapshot: Snapshot) -> None:
    """Jobs per status and queue (the jobs table is pruned with the history, and its claim index covers this)."""
    jobs = state.models.job
    values: dict[tuple[str, str], float] = {(status, "default"): 0.0 for status in JOB_STATUSES}
    for status, queue, count in connection.execute(
        sa.select(jobs.c.status, jobs.c.queue, sa.func.count()).group_by(jobs.c.status, jobs.c.queue)
    ):
        for known in JOB_STATUSES:
            values.setdefault((known, str(queue)), 0.0)
        values[(str(status), str(queue))] = float(count)
    snapshot.jobs = sorted(values.items(), key=lambda item: (item[0][1], item[0][0]))


def _schedules(state: IndexNowState, connection: Any, snapshot: Snapshot) -> None:
    """When each enabled schedule runs next, and how each one's last occurrence went; one query.

    Schedules are named by ``name`` where the table has it (named schedules),
    else by their handler. The last outcome comes from the schedules' own
    history where there is one, each read through its (schedule, id) index.
    """
    table = state.models.schedule
    name: Any = sa.func.coalesce(table.c.name, table.c.handler) if "name" in table.c else table.c.handler
    columns: list[Any] = [name.label("schedule"), table.c.next_run, table.c.enabled]
    runs: sa.Table | None = getattr(state.models, "schedule_run", None)
    if runs is not None:
        columns.append(sa.select(runs.c.outcome).where(runs.c.schedule == name)
                       .order_by(runs.c.id.desc()).limit(1).scalar_subquery())
    for found in connection.execute(sa.select(*columns).order_by(name)):
        if found.enabled:
            snapshot.schedule_next_run.append(((str(found.schedule),), clock.as_utc(found.next_run).timestamp()))
        if runs is not None:
            last = found[3]
            for outcome in sorted({*SCHEDULE_OUTCOMES, *([str(last)] if last else [])}):
                snapshot.schedule_last_outcome.append(((str(found.schedule), outcome), float(outcome == last)))


def _engines(state: IndexNowState, snapshot: Snapshot) -> None:
    """Each engine's pause and request budget, from the cache every process shares."""
    for engine in engines.configured(state):
        snapshot.paused.append(((engine.endpoint,), 0.0 if worker.endpoint_pause(state, engine) is None else 1.0))
        usage = budget.usage(state, engine)
        if usage is not None:
            snapshot.budget_remaining.append(((engine.endpoint,), float(max(0, usage.limit - usage.used))))
