"""Claims, in one place: how a worker takes rows, keeps them, and how dead workers' rows come back.

The URL queue and the jobs table work the same way, and both use this module:

- :func:`claim`: the due ``pending`` rows, oldest first by ``(available_at, id)``,
  become ``processing`` with ``claimed_at`` and a random ``claim_token`` (a job
  also counts an attempt). PostgreSQL and SQLite in one ``UPDATE … WHERE id IN
  (SELECT …) RETURNING`` (PostgreSQL with ``FOR UPDATE SKIP LOCKED`` in the
  sub-select; SQLite runs one writer at a time). MySQL/MariaDB cannot update a
  table it sub-selects: ``SELECT … FOR UPDATE SKIP LOCKED``, then an ``UPDATE``
  of those ids, in the same transaction.
- :func:`renew`: a running worker stamps ``claimed_at`` again on what it holds.
- :func:`settle`: every later write of a claimed row matches on its token, so a
  row taken back meanwhile (stale, or reset by a newer event) is left alone.
- :func:`take_back_stale`: rows claimed before a cutoff go back (to ``pending``,
  or to ``failed`` when that was their last attempt).

Every step is one short transaction run by :func:`run`: again after a transient
refusal (:func:`flask_indexnow.retry.retrying`), each try a whole transaction on
the same connection after its rollback. A caller that runs several steps (a
pass) checks out one connection with :func:`connection` and passes it in;
given an engine, a step checks one out for itself.

Status values are written into the SQL text, not bound: only then can the
database use the partial indexes on pending and processing rows.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeAlias, TypeVar

import sqlalchemy as sa

from . import clock
from .retry import retrying
from .sqlutil import IN_LIST_SIZE, chunks, dialect_name

logger = logging.getLogger(__name__)

T = TypeVar("T")
#: What a step runs on: the caller's connection, or an engine to check one out from.
Bind: TypeAlias = "sa.Engine | sa.Connection"

PENDING: sa.ColumnElement[str] = sa.literal_column("'pending'")
PROCESSING: sa.ColumnElement[str] = sa.literal_column("'processing'")


def keep_stamp(table: sa.Table) -> dict[str, Any]:
    """``updated_at = updated_at`` for a table that has the column, else nothing.

    A claim, a renewal or a give-back is no event of the row: without this,
    the column's ``onupdate`` stamp would fire, and ``updated_at`` would no
    longer be the time of the row's last event (the sitemap's lastmod reads
    it, see sitemap/changes.py).
    """
    return {"updated_at": table.c.updated_at} if "updated_at" in table.c else {}


@contextmanager
def connection(bind: Bind) -> Iterator[sa.Connection]:
    """One connection for a run of short transactions: ``bind`` itself, or one checked out of the engine.

    They run in READ COMMITTED, set once here (and reset by the pool when the
    connection goes back). MySQL/MariaDB always: under their default
    REPEATABLE READ a locking statement keeps locks on every row it scanned,
    and concurrent workers deadlock on rows none of them wanted. PostgreSQL
    when the site's engine uses a stricter level (``isolation_level=``): the
    extension's short transactions then neither fail serialization checks
    nor take part in the site's (issue 18), and each statement of a merge
    sees what was committed before it.
    """
    if isinstance(bind, sa.Connection):
        yield bind
        return
    with bind.connect() as own:
        read_committed(own)
        yield own


def read_committed(connection: sa.Connection) -> None:
    """Run ``connection``'s next transactions in READ COMMITTED where the database's default or the engine's
    level is another (see :func:`connection`)."""
    dialect = dialect_name(connection)
    if dialect == "mysql" or (dialect == "postgresql" and connection.default_isolation_level != "READ COMMITTED"):
        connection.execution_options(isolation_level="READ COMMITTED")


def run(bind: Bind, work: Callable[[sa.Connection], T]) -> T:
    """``work(connection)`` in one short transaction, run again after a transient refusal.

    No transaction is open before or after: a caller may hold the connection
    while it waits on the network. A connection found broken before the
    commit (the database restarted since it was checked out) is replaced
    once: nothing was written, so the work is simply done again.
    """
    with connection(bind) as held:
        committing = [False]

        def step() -> T:
            committing[0] = False
            with held.begin():
                result = work(held)
                committing[0] = True  # a failure from here on may have been written
            return result

        try:
            return retrying(step)
        except sa.exc.DBAPIError as exc:
            if not exc.connection_invalidated or committing[0]:
                raise
            logger.info("IndexNow: database connection lost (%s); trying again on a new one", exc.orig)
        # The Connection reconnects on next use, without the session settings made on the old one.
        read_committed(held)
        return retrying(step)


def claim(
    bind: Bind,
    table: sa.Table,
    columns: Sequence[sa.ColumnElement[Any]],
    *,
    limit: int,
    now: datetime,
    token: str,
    where: Sequence[sa.ColumnElement[bool]] = (),
    count_attempt: bool = False,
) -> list[sa.Row[Any]]:
    """Mark up to ``limit`` due rows of ``table`` as claimed by ``token``; returns ``columns`` of them.

    ``where``: further conditions (a job's queues). ``count_attempt``: the
    claim is an attempt (jobs); the rows come back with it counted. The
    rows are in no particular order.
    """
    c = table.c
    due = (c.status == PENDING, c.available_at <= now, *where)
    order = (c.available_at, c.id)
    mark: dict[str, Any] = {"status": "processing", "claimed_at": now, "claim_token": token, **keep_stamp(table)}
    if count_attempt:
        mark["attempts"] = c.attempts + 1
    dialect = dialect_name(bind)

    def work(connection: sa.Connection) -> list[sa.Row[Any]]:
        if dialect in ("postgresql", "sqlite"):
            pick = sa.select(c.id).where(*due).order_by(*order).limit(limit)
            chosen: sa.ColumnElement[bool] = c.id.in_(pick.scalar_subquery())
            if dialect == "postgresql":
                # ``id = ANY(ARRAY(…))``: the picked ids are looked up by primary key. With
                # ``IN (…)`` the planner may hash-join them against a scan of the whole table.
                chosen = c.id == sa.any_(sa.func.array(pick.with_for_update(skip_locked=True).scalar_subquery()))
            return list(connection.execute(
                sa.update(table).where(chosen).values(**mark).returning(*columns)
            ).all())
        # The rows as the UPDATE below leaves them: the attempt counted.
        shown = [(c.attempts + 1).label("attempts") if count_attempt and col is c.attempts else col
                 for col in columns]
        found = list(connection.execute(
            sa.select(*shown).where(*due).order_by(*order).limit(limit)
            .with_for_update(skip_locked=dialect == "mysql")
        ).all())
        ids = [row.id for row in found]
        for part in chunks(ids, IN_LIST_SIZE):
            connection.execute(sa.update(table).where(c.id.in_(part)).values(**mark))
        return found

    return run(bind, work)


def _owned(table: sa.Table, token: str, ids: Sequence[Any] | None) -> list[sa.ColumnElement[bool]]:
    """Rows still claimed by ``token`` (of ``ids``, when given)."""
    condition = [table.c.claim_token == token, table.c.status == PROCESSING]
    if ids is not None:
        condition.append(table.c.id.in_(list(ids)))
    return condition


def renew(bind: Bind, table: sa.Table, token: str, now: datetime, ids: Sequence[int] | None = None) -> int:
    """Stamp ``claimed_at`` again on the rows ``token`` still holds (of ``ids``), so they are not taken for stale."""
    return settle(bind, table, token, {"claimed_at": now, **keep_stamp(table)}, ids)


def settle(bind: Bind, table: sa.Table, token: str, values: Mapping[str, Any],
           ids: Sequence[int] | None = None) -> int:
    """Set ``values`` on the rows ``token`` still holds (of ``ids``, when given); returns how many.

    A row that lost the claim meanwhile belongs to someone else and is not touched.
    """
    parts = [None] if ids is None else chunks(ids, IN_LIST_SIZE)
    statements = [sa.update(table).where(*_owned(table, token, part)).values(**values) for part in parts]
    return run(bind, lambda connection: sum(int(connection.execute(s).rowcount) for s in statements))


@dataclass
class TakenBack:
    """What :func:`take_back_stale` did: rows back to pending, rows failed, and what it saw."""

    pending: int = 0
    failed: int = 0
    #: Nothing was stale at the look (no write made).
    clean: bool = False
    #: When ``clean``: the oldest ``claimed_at`` of a row still claimed (None: no claim at all).
    oldest: datetime | None = None

    @property
    def count(self) -> int:
        return self.pending + self.failed


def take_back_stale(
    bind: Bind,
    table: sa.Table,
    cutoff: datetime,
    values: Mapping[str, Any],
    *,
    failed: Mapping[str, Any] | None = None,
    gives_up: sa.ColumnElement[bool] | None = None,
) -> TakenBack:
    """Rows claimed before ``cutoff`` (their worker died) get ``values``; with ``failed``, those where ``gives_up``
    holds (their last attempt) get ``failed`` instead.

    A plain read first: nearly every call finds nothing, and then takes no
    write lock at all (a range UPDATE would lock index entries that the
    finishing passes of other workers need, in the opposite order, and on
    MySQL/MariaDB gap locks that collide with concurrent claims).
    """
    c = table.c
    stale = (c.status == PROCESSING, c.claimed_at < cutoff)

    def look(connection: sa.Connection) -> tuple[datetime | None, list[int]]:
        found = connection.execute(sa.select(sa.func.min(c.claimed_at)).where(c.status == PROCESSING)).scalar()
        oldest = None if found is None else clock.as_utc(found)
        if oldest is None or oldest >= cutoff:
            return oldest, []
        return oldest, list(connection.execute(sa.select(c.id).where(*stale)).scalars())

    with connection(bind) as held:
        oldest, ids = run(held, look)
        if not ids:
            return TakenBack(clean=oldest is None or oldest >= cutoff, oldest=oldest)

        def write(connection: sa.Connection) -> TakenBack:
            done = TakenBack()
            for part in chunks(ids, IN_LIST_SIZE):
                ours = (c.id.in_(part), *stale)
                if failed is not None and gives_up is not None:
                    done.failed += connection.execute(
                        sa.update(table).where(*ours, gives_up).values(**failed)).rowcount
                done.pending += connection.execute(sa.update(table).where(*ours).values(**values)).rowcount
            return done

        return run(held, write)
