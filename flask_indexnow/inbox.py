"""The inbox: what the site's own transactions queue, until a pass merges it (issue 18).

A save inside the site's transaction (a watched model's flush, a signal with
``session=``, ``enqueue(commit=False)``) used to upsert queue rows, which a
running pass claims, updates and deletes: on InnoDB the two deadlocked and the
database rolled the site's whole transaction back; under PostgreSQL REPEATABLE
READ or SERIALIZABLE the upsert failed its serialization check. Now such a
save only INSERTs into this table: rows no one else has seen, with no key but
a fresh id, that no pass ever locks, updates or deletes while the site's
transaction is open (a pass cannot even see them before the commit). The
site's transaction reads nothing of the extension's either, so there is
nothing for it to wait for, deadlock with or conflict with.

Each pass first merges the inbox into the queue (:mod:`.delivery.merge`), in
its own short transaction, where every queue rule applies as before. This
module holds the inbox's own SQL: the insert, and the reads of the counts.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import datetime
from typing import Any, TypeAlias

import sqlalchemy as sa

from . import clock
from .queuesql import SQLITE_OLD_VARIABLES, SUPPORTED, driver_time
from .retry import first_refusal, mark_transaction_ended
from .sqlutil import ROWS_PER_STATEMENT, chunks, dialect_name
from .state import IndexNowState

_COLUMNS = ("host", "url", "action", "available_at", "fingerprint", "created_at")


#: One event: url, host, action, available_at, fingerprint (a :class:`flask_indexnow.queue.Entry`).
Event: TypeAlias = "tuple[str, str, str, datetime, str | None]"


#: Where a failed statement leaves the transaction as it was (statement atomicity): an INSERT
#: that fails there changes nothing, and what ends the transaction (a deadlock, a lock timeout, a
#: lost connection; on SQLite a full disk or an I/O error that rolled it back) is told apart by
#: ``retry.ends_transaction`` and :func:`_sqlite_transaction_open`. No savepoint is needed around it.
_STATEMENT_ATOMIC = frozenset({"mysql", "mariadb", "sqlite"})


def write_in_transaction(state: IndexNowState, connection: sa.Connection, events: Sequence[Event]) -> None:
    """Insert ``events`` inside the site's open transaction, so that a failure costs the site nothing it can't see.

    The savepoint a guarded write needs is two more round trips, about half of
    what a watched save pays to queue on PostgreSQL or MariaDB (figures 13 and
    15), so it is spent only where it buys something:

    - MySQL/MariaDB and SQLite roll back a failed statement alone: the INSERT
      runs bare, and a failure that did not end the transaction (a missing
      table, say) leaves the site's changes as they were. (On SQLite the
      savepoint cost no round trip, but its machinery was about a quarter of
      what a watched save paid to queue.) SQLite may still roll the whole
      transaction back after a full disk or an I/O error: that is checked,
      and then the error is the site's.
    - On PostgreSQL any failed statement aborts the whole transaction, so the
      INSERT runs inside a savepoint until the inbox has taken one write from
      this process: a missing table or an old schema (``init-db`` not run) is
      then logged and the save goes through. Once proven, the INSERT runs
      bare, and if it fails all the same (the table dropped under a running
      site) the error is the site's, raised as one that ended its transaction,
      which it did; the next write is guarded again.
    - Elsewhere (any other database) every write is guarded.

    A write that the database refused for a reason that ended the transaction
    (a deadlock, a serialization failure) is always raised: after a deadlock
    inside a savepoint, MySQL/MariaDB refuse the ``ROLLBACK TO SAVEPOINT`` too,
    and the site is shown the deadlock behind it, which it knows to retry.
    """
    dialect = dialect_name(connection)
    was_open = _sqlite_transaction_open(connection) if dialect == "sqlite" else None
    bare = dialect in _STATEMENT_ATOMIC or (dialect == "postgresql" and state.inbox.proven)
    if bare and not (dialect == "sqlite" and was_open is None):  # a SQLite driver that cannot tell: guarded
        try:
            write(state, connection, events)
        except Exception as exc:
            if dialect == "postgresql":
                state.inbox.proven = False
                mark_transaction_ended(exc)
            elif was_open and not _sqlite_transaction_open(connection):
                mark_transaction_ended(exc)  # SQLite rolled the site's transaction back with the statement
            raise
        return
    try:
        with connection.begin_nested():
            write(state, connection, events)
    except Exception as exc:
        refusal = first_refusal(exc)
        if refusal is exc:
            raise
        raise refusal from None  # the deadlock itself, not the failed ROLLBACK TO SAVEPOINT after it
    state.inbox.proven = True


def _sqlite_transaction_open(connection: sa.Connection) -> bool | None:
    """Whether SQLite holds an open transaction on ``connection`` (its own view, not SQLAlchemy's).

    None when the driver cannot say (``sqlite3`` can: ``Connection.in_transaction``).
    """
    found = getattr(connection.connection.dbapi_connection, "in_transaction", None)
    return None if found is None else bool(found)


def write(state: IndexNowState, connection: sa.Connection, events: Sequence[Event]) -> None:
    """Insert ``events`` through ``connection`` (the site's transaction), in multi-row INSERTs. Nothing is committed."""
    if not events:
        return
    table = state.models.inbox
    dialect = dialect_name(connection)
    now = clock.utcnow()
    if dialect not in SUPPORTED:
        connection.execute(sa.insert(table), [
            {"host": host, "url": url, "action": action, "available_at": available_at,
             "fingerprint": fingerprint, "created_at": now} for url, host, action, available_at, fingerprint in events
        ])
        return
    stamp = driver_time(dialect, now)
    size = SQLITE_OLD_VARIABLES // len(_COLUMNS) if dialect == "sqlite" else ROWS_PER_STATEMENT
    for part in chunks(events, size):
        params: list[Any] = []
        for url, host, action, available_at, fingerprint in part:
            params += (host, url, action, driver_time(dialect, available_at), fingerprint, stamp)
        connection.exec_driver_sql(_insert_sql(connection.dialect, table, len(part)), tuple(params))


@functools.lru_cache(maxsize=64)
def _insert_sql(sa_dialect: Any, table: sa.Table, count: int) -> str:
    prep = sa_dialect.identifier_preparer
    p = "?" if sa_dialect.paramstyle == "qmark" else "%s"
    row = "(" + ", ".join([p] * len(_COLUMNS)) + ")"
    columns = ", ".join(prep.quote(name) for name in _COLUMNS)
    return f"INSERT INTO {prep.format_table(table)} ({columns}) VALUES {', '.join([row] * count)}"


def count(state: IndexNowState, connection: Any, *, due_by: datetime | None = None) -> int:
    """Events waiting in the inbox (of them, those due by ``due_by``, when given)."""
    table = state.models.inbox
    query = sa.select(sa.func.count()).select_from(table)
    if due_by is not None:
        query = query.where(table.c.available_at <= due_by)
    return int(connection.execute(query).scalar_one())


def earliest(state: IndexNowState, connection: Any) -> datetime | None:
    """The earliest due time of an event in the inbox (None: the inbox is empty)."""
    table = state.models.inbox
    found = connection.execute(sa.select(sa.func.min(table.c.available_at))).scalar()
    return None if found is None else clock.as_utc(found)


def events_for(state: IndexNowState, connection: Any, host: str, url: str) -> list[Any]:
    """The events of one URL still in the inbox, oldest first (``explain``: the inbox is small, merged each pass)."""
    table = state.models.inbox
    return list(connection.execute(
        sa.select(table.c.id, table.c.action, table.c.available_at, table.c.created_at)
        .where(table.c.host == host, table.c.url == url).order_by(table.c.id)
    ))
