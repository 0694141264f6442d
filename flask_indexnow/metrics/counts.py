"""Queue counts whose cost does not grow with the queue.

The status page counts with one ``GROUP BY`` over the whole queue: fine for
a page someone opens, but its cost grows with the table (seconds on a
million rows), and a scraper asks every 15 seconds. Here each (status,
engine) count walks its own partial index (pending, processing, failed) and
stops after :data:`EXACT_LIMIT` + 1 rows: below the limit the count is exact.
Above it, SQLite and PostgreSQL count the query in a fixed sample of the id
range (:data:`WINDOWS` runs of :data:`WINDOW` consecutive ids) scaled to the
whole range: SQLite keeps no estimate, and PostgreSQL's (``EXPLAIN``) rests
on statistics that only ``ANALYZE`` refreshes (a bulk load of 200,000 rows
read as 10,001 until autovacuum came by; rows moved between statuses are
misread until then too). MySQL/MariaDB give the planner's figure, which
InnoDB takes from the live index (index dives), needing no ``ANALYZE``.
Either way the figure is never less than the limit. All counts, the
oldest due rows and the id ranges go in one statement.

Events still in the inbox (the insert-only table the site's own transactions
write, merged into the queue by each pass) are counted as status ``inbox``
for every engine: each becomes one queue row per engine when merged. They
count in every engine's oldest due age as well, from the moment they were
written: an event is due to be merged at once, and with no worker running
the inbox is where the work piles up while ``pending`` stays empty.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

import sqlalchemy as sa
from sqlalchemy.sql import operators, visitors
from sqlalchemy.sql.elements import UnaryExpression

from .. import clock, engines
from ..sqlutil import dialect_name, quoted_table
from ..state import IndexNowState
from ..stats import QUEUE_STATUSES

#: A table's lowest and highest id (None, None when it is empty).
Bounds = tuple[Any, Any]

#: Rows a count walks at most before it takes the database's estimate instead.
EXACT_LIMIT = 10_000

#: SQLite's estimate reads WINDOWS runs of WINDOW consecutive ids: at most 2,048 rows, whatever the queue's size.
WINDOWS = 64
WINDOW = 32


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


@functools.lru_cache(maxsize=256)
def _rows(queue: sa.Table, status: str, keys: tuple[str, ...]) -> sa.Select[Any]:
    """The rows of one (status, engine) series; the same object on every scrape, so SQL made from it is made once."""
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
        columns.append(_bounded(_every_row(inbox)))
        # The oldest event still to merge: the inbox's first row by id (one seek of its primary key).
        columns.append(sa.select(inbox.c.created_at).order_by(inbox.c.id).limit(1).scalar_subquery())
    # Each table's id range, for an estimate above the limit: two seeks of its primary key, in this
    # statement rather than in one of their own (a round trip is most of a sample's cost).
    tables = [queue] + ([inbox] if inbox is not None else [])
    for table in tables:
        columns += [sa.select(sa.func.min(table.c.id)).scalar_subquery(),
                    sa.select(sa.func.max(table.c.id)).scalar_subquery()]
    if dialect_name(connection) == "postgresql":
        _no_bitmap_scans(connection)
    values = list(connection.execute(sa.select(*columns)).one())
    bounds = {}
    for table in reversed(tables):
        high = values.pop()
        bounds[table.name] = (values.pop(), high)
    extra = {}
    inbox_age = 0.0
    if inbox is not None:
        inbox_age = _age(now, values.pop())
        extra["inbox"] = _settle(connection, _every_row(inbox), int(values.pop()), inbox.c.id, bounds[inbox.name])
    width = len(QUEUE_STATUSES) + 1
    found = []
    for index, (endpoint, keys) in enumerate(pairs):
        *numbers, oldest = values[index * width:(index + 1) * width]
        counts = {status: _settle(connection, _rows(queue, status, keys), int(number), queue.c.id, bounds[queue.name])
                  for status, number in zip(QUEUE_STATUSES, numbers)}
        found.append(EngineQueue(endpoint, {**counts, **extra}, max(_age(now, oldest), inbox_age)))
    return found


def _no_bitmap_scans(connection: Any) -> None:
    """Keep PostgreSQL's bounded counts on plain index scans, for the rest of the scrape's transaction.

    Without statistics (a table loaded since the last ANALYZE) the planner
    guesses a few hundred rows for a status and takes a bitmap scan of its
    partial index, which reads every entry before the LIMIT can stop it: 65 ms
    for 1,000,000 pending rows, against 2 ms for an index scan that stops at
    :data:`EXACT_LIMIT` + 1. ``SET LOCAL`` ends with the transaction (the
    connection goes back to the pool with its settings as they were).
    """
    connection.exec_driver_sql("SET LOCAL enable_bitmapscan = off")


@functools.lru_cache(maxsize=16)
def _every_row(table: sa.Table) -> sa.Select[Any]:
    """Every row of ``table`` (the inbox), as :func:`_rows`: one object for every scrape."""
    return sa.select(sa.literal(1)).select_from(table)


def _bounded(rows: sa.Select[Any]) -> Any:
    """``rows`` counted up to :data:`EXACT_LIMIT` + 1, as a scalar subquery."""
    return sa.select(sa.func.count()).select_from(rows.limit(EXACT_LIMIT + 1).subquery()).scalar_subquery()


def _settle(connection: Any, rows: sa.Select[Any], counted: int, ids: sa.Column[Any], bounds: Bounds) -> int:
    """The bounded count when it is exact; above the limit the database's estimate (``ids``: the table's id column,
    ``bounds``: its lowest and highest id)."""
    return counted if counted <= EXACT_LIMIT else estimate(connection, rows, ids, bounds)


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


def estimate(connection: Any, rows: sa.Select[Any], ids: sa.Column[Any], bounds: Bounds | None = None) -> int:
    """How many rows ``rows`` returns, estimated at no cost that grows with the table; at least :data:`EXACT_LIMIT` + 1.

    MySQL: the planner's figure (InnoDB's index dives read the live index).
    SQLite and PostgreSQL: a sample of the id range of ``ids`` (the integer
    primary key of the table ``rows`` reads), right without ``ANALYZE``.
    """
    dialect = dialect_name(connection)
    if dialect == "mysql":
        compiled = rows.compile(connection, compile_kwargs={"literal_binds": True})
        result = connection.exec_driver_sql(f"EXPLAIN {compiled}")
        guess = int(dict(zip(result.keys(), result.one()))["rows"] or 0)
    else:
        guess = sampled_count(connection, rows, ids, bounds)
    return max(guess, EXACT_LIMIT + 1)


def sampled_count(connection: Any, rows: sa.Select[Any], ids: sa.Column[Any], bounds: Bounds | None = None) -> int:
    """``rows`` counted in :data:`WINDOWS` runs of :data:`WINDOW` ids spread over the id range, scaled to the range.

    Two statements: the lowest and highest id (one seek each; none when the
    caller read them already, ``bounds``), then the windows' matching rows,
    read by primary-key ranges. Every id of the range
    weighs the same, so a hole (delivered rows deleted) or another status in
    between is counted in proportion: the error is a few percent while the
    counted rows fill more than a small part of the range. The windows sit in
    the middle of equal slices, not at random, so an unchanged queue reads the
    same on every scrape (a jittering gauge would wake ``delta()`` alerts). A
    range no wider than the sample is read whole: the count is then exact.

    Both are SQL text, the windows' made once per select (:func:`_windows_sql`).
    """
    if bounds is None:
        table = quoted_table(connection, ids.table)
        column = connection.dialect.identifier_preparer.quote(ids.name)
        bounds = connection.exec_driver_sql(
            f"SELECT (SELECT min({column}) FROM {table}), (SELECT max({column}) FROM {table})"
        ).one()
    low, high = bounds
    if low is None:
        return 0
    span = int(high) - int(low) + 1
    windows = _windows(int(low), span)
    last = windows.first + windows.step * (windows.count - 1)
    matched = connection.exec_driver_sql(
        _windows_sql(connection.dialect, rows, ids),
        {"first": windows.first, "step": windows.step, "last": last, "width": windows.width - 1},
    ).scalar_one()
    read = windows.count * windows.width
    return (2 * int(matched) * span + read) // (2 * read)  # matched × span / read, rounded


@dataclass(frozen=True)
class Windows:
    """``count`` runs of ``width`` ids, the first from ``first``, one every ``step`` ids."""

    first: int
    step: int
    count: int
    width: int


def _windows(low: int, span: int) -> Windows:
    """One window in the middle of each of :data:`WINDOWS` equal slices of the range (the remainder, under
    :data:`WINDOWS` ids, split between its ends); the whole range when it is no wider than the sample."""
    if span <= WINDOWS * WINDOW:
        return Windows(low, span, 1, span)
    step = span // WINDOWS
    return Windows(low + (span - WINDOWS * step) // 2 + (step - WINDOW) // 2, step, WINDOWS, WINDOW)


#: How many rows of ``{rows}`` (a select of their ``id``) are in the windows, on SQLite. Parameters: the first
#: window's start, the step between starts, the last start, the width less one. Each window is one rowid range seek.
_IN_WINDOWS = (
    "WITH RECURSIVE windows(start) AS (SELECT :first UNION ALL SELECT start + :step FROM windows WHERE start < :last) "
    "SELECT count(*) FROM windows JOIN ({rows}) AS sample ON sample.id BETWEEN windows.start AND windows.start + :width"
)

#: The same on PostgreSQL: ``{rows}`` also bounded by ``windows.start`` and ``windows.stop``, in a LATERAL
#: subquery fenced by ``OFFSET 0``, so that each window is one range scan of the primary key. (Without the fence
#: the planner flattens it into a join and, guessing one row for the status without statistics, scans the whole
#: table once and tests every row against every window: 1.4 s at 200,000 rows.)
_IN_WINDOWS_PG = (
    "SELECT count(*) FROM (SELECT g AS start, g + CAST(%(width)s AS BIGINT) AS stop FROM "
    "generate_series(CAST(%(first)s AS BIGINT), CAST(%(last)s AS BIGINT), CAST(%(step)s AS BIGINT)) AS g) AS windows "
    "CROSS JOIN LATERAL ({rows}) AS sample"
)


@functools.lru_cache(maxsize=256)
def _windows_sql(dialect: Any, rows: sa.Select[Any], ids: sa.Column[Any]) -> str:
    """:data:`_IN_WINDOWS` for ``rows``: their ids, every other column of the table kept off the indexes.

    SQLite writes such a term ``+column``, PostgreSQL ``(column || '')`` (the
    conditions are on text columns; no index, partial or not, matches it).
    Otherwise the planner takes the status's partial index for the windows
    (it guesses a few rows for the equality) and walks all of it, instead of
    seeking each window. Made once per select (the callers pass the same
    object every scrape): rewriting and compiling it costs about 1 ms of
    Python, as much as the reads.
    """
    postgresql = dialect.name == "postgresql"

    def unindexed(element: Any, **_kw: Any) -> Any:
        if isinstance(element, sa.Column) and element.table is ids.table and element is not ids:
            if postgresql:
                return sa.type_coerce(element.op("||")(sa.literal_column("''")), element.type).self_group()
            return UnaryExpression(element, operator=operators.custom_op("+"), type_=element.type)
        return None

    shielded = cast("sa.Select[Any]", visitors.replacement_traverse(rows, {}, unindexed))
    selecting_ids = shielded.with_only_columns(ids.label("id"), maintain_column_froms=True)
    if postgresql:
        selecting_ids = selecting_ids.where(ids >= sa.literal_column("windows.start"),
                                            ids <= sa.literal_column("windows.stop")).offset(0)
    compiled = selecting_ids.compile(dialect=dialect, compile_kwargs={"literal_binds": True})
    return (_IN_WINDOWS_PG if postgresql else _IN_WINDOWS).format(rows=compiled)
