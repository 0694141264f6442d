"""Set-based statements on the driver: the end of a delivered batch (the queue upsert is queuesql.py).

Through SQLAlchemy's per-row write path the end of a batch would cost several
times what the database itself spends; here it is one statement per batch, its
SQL text built once per table and dialect, with the values already in the
driver's own form, on a :class:`~sqlalchemy.engine.Connection` the caller owns.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from ..queuesql import driver_time
from ..retry import gives_up
from ..sqlutil import ROWS_PER_STATEMENT, chunks, dialect_name, quoted_table
from ..totals import record, upsert_sql

# -- the end of a delivered batch -----------------------------------------------------------------
#
# A batch is the rows of one host in one claim whose ids lie between its first
# and its last: the pass sorts its claimed rows by id and cuts each host's rows
# into contiguous slices (chunks, and the halves of a refused batch), so
# (claim_token, host, id range) selects exactly the batch, served by the
# claimed-rows index. A row whose claim was taken meanwhile (a newer event,
# or a stale sweep and another pass) no longer carries the token: it is left
# alone.

_HISTORY_COLUMNS = "host, url, action, status, http_status, error, attempts, created_at, engine"
_BATCH = "claim_token = :token AND host = :host AND engine = :engine AND id BETWEEN :lo AND :hi"


def finish_batch(
    connection: Any,
    queue: sa.Table,
    history: sa.Table,
    params: dict[str, Any],
    rows: Sequence[Any],
    *,
    success: bool,
    totals: sa.Table | None = None,
) -> set[int] | None:
    """Delete (``success``) or retry/fail the batch's ``rows`` and write their history, set-based.

    ``params``: ``token``, ``host``, ``engine`` (the rows' engine key),
    ``engine_url`` (the endpoint, for the history), ``lo``, ``hi``, ``now``, ``http``,
    ``error`` and, for a success, ``status`` (the history status); for a
    failure, ``limit`` (a row whose attempts reach it fails for good: 0 fails
    every row) and ``retry_at``. Times are converted here. Every row of
    ``rows`` gets its history row, owned or not (the POST did happen).
    ``totals``: the delivery totals table, where every history row written
    is counted (:mod:`flask_indexnow.totals`), last in the
    transaction; on PostgreSQL inside the batch's own statement, so it costs
    no round trip. Returns None when every row was still ours, else the ids that were.
    """
    dialect = dialect_name(connection)
    values = dict(params)
    for name in ("now", "retry_at"):
        if values.get(name) is not None:
            values[name] = driver_time(dialect, values[name])
    counted = None if totals is None else upsert_sql(connection.dialect, totals, dialect)
    statements = _finish_sql(connection.dialect, queue, history, dialect, success,
                             counted if dialect == "postgresql" else None)
    owned: set[int] | None
    if dialect == "mysql":
        # No INSERT … SELECT here: it holds the table's AUTO-INC lock while it
        # locks the rows it reads, and concurrent batch ends then fail with
        # error 1467. Lock the batch, change it, then write its history from
        # what the pass already holds.
        lock, change = statements
        owned = set(connection.execute(lock, values).scalars())
        connection.execute(change, values)
        insert_history(connection, history, rows, values)
        _count(connection, totals, rows, params)
        return None if len(owned) == len(rows) else owned
    if dialect == "postgresql":
        owned = set(connection.execute(statements[0], values).scalars())
        owned = None if len(owned) == len(rows) else owned
    else:
        copied, change = statements
        owned = None
        if connection.execute(copied, values).rowcount != len(rows):
            # SQLite: this transaction is the only writer, so this read is exact.
            owned = set(connection.execute(_owned_sql(connection.dialect, queue), values).scalars())
        connection.execute(change, values)
    if owned is not None:  # rows whose claim was taken meanwhile: their attempt is history too
        insert_history(connection, history, [row for row in rows if row.id not in owned], values)
    if dialect == "postgresql":  # the batch's statement counted the rows it changed: count the others
        _count(connection, totals, [row for row in rows if owned is not None and row.id not in owned], params)
    else:
        _count(connection, totals, rows, params)
    return owned


def _count(connection: Any, totals: sa.Table | None, rows: Sequence[Any], params: dict[str, Any]) -> None:
    """Add ``rows``' history rows to the delivery totals, by status, in one statement."""
    if totals is None or not rows:
        return
    limit = params.get("limit")
    counts = Counter(params["status"] if limit is None else ("failed" if gives_up(row.attempts + 1, limit) else "retry")
                     for row in rows)
    record(connection, totals, {(params["engine_url"], status): n for status, n in counts.items()}, params["now"])


def insert_history(connection: Any, history: sa.Table, rows: Sequence[Any], values: dict[str, Any]) -> None:
    """One history row per claimed row, as the attempt went, in multi-row INSERTs.

    ``values`` as in :func:`finish_batch`, times already converted.
    """
    if not rows:
        return
    limit = values.get("limit")
    common = (values["http"], values["error"])
    engine_url = values.get("engine_url")
    p = "?" if connection.dialect.paramstyle == "qmark" else "%s"
    h = quoted_table(connection.dialect, history)
    for part in chunks(rows, ROWS_PER_STATEMENT):
        params: list[Any] = []
        for row in part:
            attempts = row.attempts + 1
            status = values["status"] if limit is None else ("failed" if gives_up(attempts, limit) else "retry")
            params += (row.host, row.url, row.action, status, *common, attempts, values["now"], engine_url)
        placeholders = ", ".join([f"({', '.join([p] * 9)})"] * len(part))
        connection.exec_driver_sql(
            f"INSERT INTO {h} ({_HISTORY_COLUMNS}) VALUES {placeholders}", tuple(params)
        )


#: :func:`flask_indexnow.retry.gives_up` written in SQL for a batch's rows (this attempt counted).
_GIVES_UP = "attempts + 1 >= :limit"


@functools.lru_cache(maxsize=64)
def _owned_sql(sa_dialect: Any, queue: sa.Table) -> sa.TextClause:
    return sa.text(f"SELECT id FROM {quoted_table(sa_dialect, queue)} WHERE {_BATCH}")


@functools.lru_cache(maxsize=64)
def _finish_sql(sa_dialect: Any, queue: sa.Table, history: sa.Table, dialect: str,
                success: bool, counted: tuple[str, str] | None = None) -> tuple[sa.TextClause, ...]:
    """The end of a batch; ``counted`` (PostgreSQL): the totals upsert's two ends, to count the changed rows too."""
    q, h = quoted_table(sa_dialect, queue), quoted_table(sa_dialect, history)

    def cast(name: str, sql_type: str) -> str:
        # PostgreSQL cannot infer a parameter's type in a SELECT list; the others need no cast.
        return f"CAST(:{name} AS {sql_type})" if dialect == "postgresql" else f":{name}"

    http, error, now = cast("http", "INTEGER"), cast("error", "VARCHAR(1000)"), cast("now", "TIMESTAMP")
    engine_url = cast("engine_url", "VARCHAR(255)")
    if success:
        history_status = cast("status", "VARCHAR(12)")
    else:
        history_status = f"CASE WHEN {_GIVES_UP} THEN 'failed' ELSE 'retry' END"
    # Every term reads the old row (MySQL assigns left to right: attempts last).
    retry_update = (
        f"UPDATE {q} SET available_at = CASE WHEN {_GIVES_UP} THEN available_at "
        f"ELSE {cast('retry_at', 'TIMESTAMP')} END, "
        f"status = CASE WHEN {_GIVES_UP} THEN 'failed' ELSE 'pending' END, "
        f"claimed_at = NULL, claim_token = NULL, last_error = {error}, last_http_status = {http}, "
        f"updated_at = {now}, attempts = attempts + 1 WHERE {_BATCH}"
    )
    if dialect == "postgresql":
        # One statement: the changed rows come back from the DELETE/UPDATE and feed the history.
        if success:
            change, returned, copied = f"DELETE FROM {q} WHERE {_BATCH}", "", "attempts + 1"
        else:
            change, returned, copied = retry_update, ", status", "attempts"
            history_status = "CASE WHEN status = 'failed' THEN 'failed' ELSE 'retry' END"
        totals = ""
        if counted is not None:
            # One counter row per status, in status order (the lock order of every writer).
            head, tail = counted
            totals = (f", t AS ({head} SELECT {engine_url}, s, count(*), {now} FROM "
                      f"(SELECT {history_status} AS s FROM d) AS o GROUP BY s ORDER BY s {tail})")
        return (sa.text(
            f"WITH d AS ({change} RETURNING id, host, url, action, attempts{returned}), "
            f"i AS (INSERT INTO {h} ({_HISTORY_COLUMNS}) SELECT host, url, action, {history_status}, "
            f"{http}, {error}, {copied}, {now}, {engine_url} FROM d){totals} "
            "SELECT id FROM d"
        ),)
    if dialect == "mysql":
        copy = sa.text(f"SELECT id FROM {q} WHERE {_BATCH} FOR UPDATE")
    else:
        copy = sa.text(
            f"INSERT INTO {h} ({_HISTORY_COLUMNS}) SELECT host, url, action, {history_status}, {http}, {error}, "
            f"attempts + 1, {now}, {engine_url} FROM {q} WHERE {_BATCH}"
        )
    return copy, sa.text(f"DELETE FROM {q} WHERE {_BATCH}" if success else retry_update)
