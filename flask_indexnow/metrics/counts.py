"""Queue counts whose cost does not grow with the queue.

The status page counts with one ``GROUP BY`` over the whole queue: fine for
a page someone opens, but its cost grows with the table (seconds on a
million rows), and a scraper asks every 15 seconds. Here each (status,
engine) count walks its own partial index (pending, processing, failed) and
stops after :data:`EXACT_LIMIT` + 1 rows: below the limit the count is exact.
Above it, PostgreSQL and MySQL/MariaDB give the planner's own estimate of the
same query (what ``EXPLAIN`` says, kept current by autovacuum / InnoDB's
statistics), never less than the limit; SQLite keeps no such estimate and
counts exactly. All counts and the oldest due rows go in one statement.

Events still in the inbox (the insert-only table the site's own transactions
write, merged into the queue by each pass) are counted as status ``inbox``
for every engine: each becomes one queue row per engine when merged.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from .. import clock, engines
from ..sqlutil import dialect_name
from ..state import IndexNowState
from ..stats import QUEUE_STATUSES

#: Rows a count walks at most before it takes the database's estimate instead.
EXACT_LIMIT = 10_000


@dataclass(frozen=True)
class EngineQueue:
    """One engine's queue: rows per status, and how long its oldest due row has waited (0 when none)."""

    endpoint: str
    counts: dict[str, int]
    oldest_due_age_seconds: float


def engine_keys(state: IndexNowState) -> list[tuple[str, tuple[str, ...]]]:
    """Each configured endpoint and the queue ``engine`` values that are its rows (see :func:`engines.resolve`)."""
    configured = engines.endpoints(state)
    return [(endpoint, ("", endpoint) if index == 0 else (endpoint,)) for index, endpoint in enumerate(configured)]


def _rows(queue: sa.Table, status: str, keys: Sequence[str]) -> sa.Select[Any]:
    # The status as a literal: the planners need it to pick the partial index (see tables.py).
    return sa.select(sa.literal(1)).where(queue.c.status == sa.literal_column(f"'{status}'"),
                                          queue.c.engine.in_(keys))


def engine_queues(state: IndexNowState, connection: Any) -> list[EngineQueue]:
    """Every configured engine's queue counts and oldest due age, in one statement (plus estimates above the limit)."""
    queue = state.models.queue
    now = clock.utcnow()
    pairs = engine_keys(state)
    inbox = _inbox(state)
    columns: list[Any] = []
    for _endpoint, keys in pairs:
        columns += [_bounded(_rows(queue, status, keys)) for status in QUEUE_STATUSES]
        # The first pending row in due order, due or not: a walk of the claim index that stops at
        # once. (A range "available_at <= now" walks all of it on PostgreSQL, which drops the status
        # from the conditions of a partial index on status and then cannot seek on available_at.)
        columns.append(
            sa.select(queue.c.available_at)
            .where(queue.c.status == sa.literal_column("'pending'"), queue.c.engine.in_(keys))
            .order_by(queue.c.status, queue.c.available_at).limit(1)
            .scalar_subquery()
        )
    if inbox is not None:
        columns.append(_bounded(sa.select(sa.literal(1)).select_from(inbox)))
    values = list(connection.execute(sa.select(*columns)).one())
    extra = {}
    if inbox is not None:
        extra["inbox"] = _settle(connection, sa.select(sa.literal(1)).select_from(inbox), int(values.pop()))
    width = len(QUEUE_STATUSES) + 1
    found = []
    for index, (endpoint, keys) in enumerate(pairs):
        *numbers, oldest = values[index * width:(index + 1) * width]
        counts = {status: _settle(connection, _rows(queue, status, keys), int(number))
                  for status, number in zip(QUEUE_STATUSES, numbers)}
        found.append(EngineQueue(endpoint, {**counts, **extra}, _age(now, oldest)))
    return found


def _bounded(rows: sa.Select[Any]) -> Any:
    """``rows`` counted up to :data:`EXACT_LIMIT` + 1, as a scalar subquery."""
    return sa.select(sa.func.count()).select_from(rows.limit(EXACT_LIMIT + 1).subquery()).scalar_subquery()


def _settle(connection: Any, rows: sa.Select[Any], counted: int) -> int:
    """The bounded count when it is exact; above the limit the estimate, or (SQLite) every row counted."""
    if counted <= EXACT_LIMIT:
        return counted
    guess = estimate(connection, rows)
    return guess if guess is not None else exact_count(connection, rows)


def _inbox(state: IndexNowState) -> sa.Table | None:
    """The inbox table, in versions that have one."""
    table: sa.Table | None = getattr(state.models, "inbox", None)
    return table


def _age(now: datetime, oldest: Any) -> float:
    """How long the first row in due order has been due; 0 when there is none, or it is not due yet."""
    if oldest is None:
        return 0.0
    if isinstance(oldest, str):  # SQLite hands a scalar subquery's time back as its text
        oldest = datetime.fromisoformat(oldest)
    return max(0.0, (now - clock.as_utc(oldest)).total_seconds())


def estimate(connection: Any, rows: sa.Select[Any]) -> int | None:
    """The planner's estimate of how many rows ``rows`` returns, at least :data:`EXACT_LIMIT` + 1.

    None where the database keeps no estimate (SQLite): the caller counts exactly.
    """
    dialect = dialect_name(connection)
    if dialect == "postgresql":
        compiled = rows.compile(connection, compile_kwargs={"literal_binds": True})
        plan = connection.exec_driver_sql(f"EXPLAIN (FORMAT JSON) {compiled}").scalar_one()
        if isinstance(plan, str):
            plan = json.loads(plan)
        guess = int(plan[0]["Plan"]["Plan Rows"])
    elif dialect == "mysql":
        compiled = rows.compile(connection, compile_kwargs={"literal_binds": True})
        result = connection.exec_driver_sql(f"EXPLAIN {compiled}")
        guess = int(dict(zip(result.keys(), result.one()))["rows"] or 0)
    else:
        return None
    return max(guess, EXACT_LIMIT + 1)


def exact_count(connection: Any, rows: sa.Select[Any]) -> int:
    """Every row of ``rows``, counted (SQLite above the limit)."""
    return int(connection.execute(sa.select(sa.func.count()).select_from(rows.subquery())).scalar_one())
