"""Deliveries ever recorded, per engine and history status: counters that survive pruning and restarts.

Prometheus counters must never go down, and the work is done by many
processes, so the totals live in the database (``indexnow_totals``): one
row per (engine, history status), added to by the same transaction that
writes the outcome and its history rows. That is one statement per outcome,
whatever the number of URLs: a multi-row upsert that adds each status's count
(on PostgreSQL folded into the batch's own statement: no round trip at all).

Many workers finishing batches at once update the same few rows. A batch
counts after its queue rows and history are written, and the outcome's
transaction only writes the ledger after that, so the counter rows stay
locked for a few statements; and always in (engine, status) order, so two
transactions never wait on each other's rows in opposite orders (no deadlock).
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from . import engines
from .sqlutil import dialect_name
from .state import IndexNowState
from .tables import UTCDateTime


def record_rows(connection: Any, state: IndexNowState, rows: Iterable[Any], status_of: Callable[[Any], str],
                now: datetime) -> None:
    """Count one history row per claimed queue row (``status_of(row)`` its history status), in one statement.

    What every writer of history calls, in the transaction that writes it,
    last (see the module's docstring). A row's engine is counted as its
    endpoint URL, as the history records it.
    """
    counts = Counter((engines.resolve(state, row.engine) or row.engine, status_of(row)) for row in rows)
    record(connection, state.models.totals, counts, now)


def record(connection: Any, table: sa.Table, counts: Mapping[tuple[str, str], int], now: datetime) -> None:
    """Add ``counts`` ((engine, history status) → URLs) to the totals, in the caller's transaction, in one statement.

    ``engine`` is the endpoint URL. Any status string is taken (``success``,
    ``retry``, ``failed``, ``dry_run``, ``skipped``, or one added later): the
    totals count what the history records. Zero counts are left out.
    """
    items = sorted((key, int(n)) for key, n in counts.items() if n)
    if not items:
        return
    params: dict[str, Any] = {"now": now}
    for index, ((engine, status), count) in enumerate(items):
        params[f"e{index}"], params[f"s{index}"], params[f"n{index}"] = engine, status, count
    connection.execute(_record_sql(connection.dialect, table, dialect_name(connection), len(items)), params)


@functools.lru_cache(maxsize=64)
def _record_sql(sa_dialect: Any, table: sa.Table, dialect: str, rows: int) -> sa.TextClause:
    """The upsert of ``rows`` (engine, status) counters, built once per table, dialect and size."""
    head, tail = upsert_sql(sa_dialect, table, dialect)
    values = ", ".join(f"(:e{i}, :s{i}, :n{i}, :now)" for i in range(rows))
    return sa.text(f"{head} VALUES {values} {tail}").bindparams(sa.bindparam("now", type_=UTCDateTime()))


@functools.lru_cache(maxsize=64)
def upsert_sql(sa_dialect: Any, table: sa.Table, dialect: str) -> tuple[str, str]:
    """The two ends of the totals upsert: ``INSERT INTO … (engine, status, count, last_at)`` and its conflict clause.

    Between them goes the rows' source (VALUES, or a SELECT: see
    ``delivery.setsql``, which folds the count into a batch's own statement
    on PostgreSQL). ``last_at`` only moves forward: workers commit out of order.
    """
    prep = sa_dialect.identifier_preparer
    t = prep.quote_identifier(table.name)  # every identifier quoted: prefixes and column names stay names
    engine, status, count, last_at = map(prep.quote_identifier, ("engine", "status", "count", "last_at"))
    head = f"INSERT INTO {t} ({engine}, {status}, {count}, {last_at})"
    if dialect == "mysql":
        return head, (f"ON DUPLICATE KEY UPDATE {count} = {count} + VALUES({count}), "
                      f"{last_at} = GREATEST({last_at}, VALUES({last_at}))")
    if dialect in ("postgresql", "sqlite"):
        # SQLite's two-argument MAX is its GREATEST (its times are text in one fixed format: text order is time order).
        greatest = "GREATEST" if dialect == "postgresql" else "MAX"
        return head, (f"ON CONFLICT ({engine}, {status}) DO UPDATE SET {count} = {t}.{count} + excluded.{count}, "
                      f"{last_at} = {greatest}({t}.{last_at}, excluded.{last_at})")
    raise NotImplementedError(f"the delivery totals support PostgreSQL, SQLite and MySQL/MariaDB, not {dialect}")


def read(connection: Any, table: sa.Table) -> list[tuple[str, str, int, datetime]]:
    """Every counter: (engine, status, count, last_at), in (engine, status) order."""
    c = table.c
    return [(str(e), str(s), int(n), at) for e, s, n, at in connection.execute(
        sa.select(c.engine, c.status, c.count, c.last_at).order_by(c.engine, c.status))]
