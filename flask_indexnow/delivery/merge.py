"""The first step of every pass: the inbox merged into the queue (issue 18).

What the site's transactions queued waits in the inbox (:mod:`flask_indexnow.inbox`).
A merge takes its rows in id order, applies them to the queue with the queue's
own write (:func:`flask_indexnow.queue.write_entries`: dedup, the last event
wins, an event for a row being delivered takes its claim away, publication
dates, fingerprints and INDEXNOW_RESUBMIT_INTERVAL read from the ledger as it
is now, one row per engine, a retry's wait kept) and deletes them, all in one
short transaction of the pass, run again after a transient refusal
(:func:`flask_indexnow.claims.run`). Set-based: one read of the inbox, the
queue's chunked upsert, one delete, per :data:`MERGE_ROWS` events.

Merges run one at a time per database and table prefix, so an older event
never overwrites a newer one merged by another process: PostgreSQL takes a
transaction-scoped advisory lock, MySQL/MariaDB a named lock (``GET_LOCK``)
released only after the commit, SQLite's first statement takes its single
write lock. Each merge then reads what was committed before it began (the
pass's connection runs READ COMMITTED), deletes exactly the rows it read, and
commits both together: no event is merged twice, none is lost. A merge never
waits for a site's transaction: rows not committed yet are invisible to it
(PostgreSQL, SQLite) or skipped by its non-locking read (MySQL/MariaDB), and
the next pass takes them.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any

import sqlalchemy as sa

from .. import claims, clock
from ..claims import Bind
from ..missing import is_missing_table, missing_tables_message
from ..queue import Entry, write_entries
from ..sqlutil import IN_LIST_SIZE, chunks, dialect_name
from ..state import IndexNowState

logger = logging.getLogger(__name__)

#: Inbox rows one merge transaction takes.
MERGE_ROWS = 5_000
#: Merge transactions one pass runs at most (then the pass goes on; the next one takes the rest).
MERGE_ROUNDS = 20
#: Seconds a merge waits for another process's merge on MySQL/MariaDB before leaving it the work.
LOCK_WAIT = 5


def merge_inbox(state: IndexNowState, bind: Bind, *, rows: int = MERGE_ROWS, rounds: int = MERGE_ROUNDS) -> int:
    """Merge what waits in the inbox into the queue; returns how many events were merged.

    An empty inbox costs one indexed read and no lock.
    """
    merged = 0
    with claims.connection(bind) as connection:
        for _ in range(rounds):
            try:
                if not claims.run(connection, lambda c: _waiting(state, c)):
                    break
            except sa.exc.DBAPIError as exc:
                if not is_missing_table(exc) or not _queue_exists(state, connection):
                    raise  # no tables at all: the pass says so, once
                # A database upgraded without `flask indexnow init-db`: delivery of the queue goes on.
                state.quiet_log.log("inbox-missing", logging.ERROR,
                                    "IndexNow: the inbox cannot be merged: " + missing_tables_message(state.prefix))
                return 0
            taken = _merge_round(state, connection, rows)
            merged += taken
            if taken < rows:
                break
    if merged:
        logger.debug("IndexNow: %d inbox event(s) merged into the queue", merged)
    return merged


def _queue_exists(state: IndexNowState, connection: sa.Connection) -> bool:
    queue = state.models.queue
    try:
        claims.run(connection, lambda c: c.execute(sa.select(queue.c.id).limit(1)).first())
    except sa.exc.DBAPIError as exc:
        if is_missing_table(exc):
            return False
        raise
    return True


def _waiting(state: IndexNowState, connection: sa.Connection) -> bool:
    inbox = state.models.inbox
    return connection.execute(sa.select(inbox.c.id).limit(1)).first() is not None


def _merge_round(state: IndexNowState, connection: sa.Connection, rows: int) -> int:
    if dialect_name(connection) != "mysql":
        return claims.run(connection, lambda c: _merge(state, c, rows))
    name = _lock_name(state, connection)
    if not connection.execute(sa.select(sa.func.get_lock(name, LOCK_WAIT))).scalar():
        connection.rollback()
        return 0  # another process merges: the next pass takes what it leaves
    try:
        connection.commit()  # GET_LOCK began a transaction: the merge's own starts afresh
        return claims.run(connection, lambda c: _merge(state, c, rows))
    finally:
        # Only after the commit: a merge that took the lock earlier would read rows already merged.
        try:
            connection.execute(sa.select(sa.func.release_lock(name)))
            connection.rollback()
        except sa.exc.DBAPIError:  # the connection broke: the server released the lock with it
            logger.debug("IndexNow: the inbox merge lock could not be released", exc_info=True)


def _merge(state: IndexNowState, connection: sa.Connection, rows: int) -> int:
    """One merge transaction: take up to ``rows`` events by id, write them to the queue, delete them."""
    events = _take(state, connection, rows)
    if events:
        # write_entries keeps each URL's last event (rows in id order) and applies every queue rule.
        # The rows are stamped with the events' time, not the merge's (the sitemap's lastmod reads it):
        # the latest event's, one stamp per statement, never later than the merge.
        write_entries(state, connection, [
            Entry(e.url, e.host, e.action, clock.as_utc(e.available_at), e.fingerprint) for e in events
        ], now=max(clock.as_utc(e.created_at) for e in events))
    return len(events)


def _take(state: IndexNowState, connection: sa.Connection, rows: int) -> list[Any]:
    """The oldest ``rows`` committed events, deleted in this transaction, in id order."""
    inbox = state.models.inbox
    c = inbox.c
    columns = (c.id, c.host, c.url, c.action, c.available_at, c.fingerprint, c.created_at)
    dialect = dialect_name(connection)
    pick = sa.select(c.id).order_by(c.id).limit(rows)
    if dialect == "postgresql":
        connection.execute(sa.select(sa.func.pg_advisory_xact_lock(*_pg_lock_keys(state))))
        taken = sa.delete(inbox).where(c.id == sa.any_(sa.func.array(pick.scalar_subquery())))
    elif dialect == "sqlite":  # a DELETE first: this transaction takes SQLite's write lock before it reads
        taken = sa.delete(inbox).where(c.id.in_(pick.scalar_subquery()))
    else:
        found = list(connection.execute(sa.select(*columns).order_by(c.id).limit(rows)))  # non-locking read
        for part in chunks([row.id for row in found], IN_LIST_SIZE):
            connection.execute(sa.delete(inbox).where(c.id.in_(part)))
        return found
    found = list(connection.execute(taken.returning(*columns)))
    found.sort(key=lambda row: row.id)  # RETURNING promises no order
    return found


def _lock_name(state: IndexNowState, connection: sa.Connection) -> str:
    """The MySQL/MariaDB lock of one database's inbox (lock names are server-wide, at most 64 characters)."""
    database = connection.engine.url.database or ""
    return "indexnow_merge:" + hashlib.sha256(f"{database}.{state.models.inbox.name}".encode()).hexdigest()[:40]


def _pg_lock_keys(state: IndexNowState) -> tuple[int, int]:
    """The advisory lock of this prefix's inbox: a fixed class key for the extension, one key per table."""
    digest = hashlib.sha256(state.models.inbox.name.encode()).digest()
    return 0x1D0E, int.from_bytes(digest[:4], "big", signed=True)
