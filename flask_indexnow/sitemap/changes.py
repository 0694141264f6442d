"""When a URL last really changed: the sitemap's ``<lastmod>``, kept in the ledger (``indexnow_urls``).

A real change is an ``update`` event: the watcher queues one only when the
content changed (``fields=``, fingerprints), so a write outside ``fields=``
(``last_seen``) never moves the time. The event's time is the queue row's
``updated_at``, stamped when the event was written.

Where it is recorded, and why there: not in the host's transaction (the row
the host's save writes must never be one a pass updates, so that a save and a
delivery never wait for each other, and the ledger is updated by every pass),
but by the pass, in a transaction it runs anyway: :func:`record_changes` is called with the rows a batch delivered
(or failed), inside :func:`flask_indexnow.delivery.worker.finish`. Until a
row is claimed, :func:`change_times` reads its ``updated_at`` straight from
the queue, and an event still in the inbox (saved in the site's transaction,
not merged yet) its ``created_at``. The merge stamps the queue rows it writes
with their events' time (``delivery/merge.py``), so the time stays the event's.

Only rows never attempted since their event count (``attempts = 0``): a failed
POST stamps ``updated_at`` with the time of the answer, and a row given back
unsent keeps its stamp, so neither is taken for a change. Recording keeps the
later time (``max``), so it is idempotent and its order does not matter.
Nothing is recorded unless INDEXNOW_SITEMAP_URL is set: a site without the
sitemap pays nothing, and needs no new column.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import ARRAY

from ..clock import as_utc
from ..models import url_hash
from ..sqlutil import IN_LIST_SIZE, ROWS_PER_STATEMENT, chunks, dialect_name
from ..verify.verdict import SKIPPED

#: One change to record: host, url, url_hash, when.
Change = tuple[str, str, str, datetime]


def records_changes(state: Any) -> bool:
    """Whether this app keeps change times (it serves a sitemap)."""
    return state.settings.sitemap_url is not None


def changes_of(rows: Iterable[Any]) -> list[Change]:
    """The changes claimed queue rows stand for: ``update`` rows never attempted since their event."""
    return [(r.host, r.url, r.url_hash, r.updated_at) for r in rows
            if r.action == "update" and r.attempts == 0 and r.updated_at is not None]


def record_changes(connection: sa.Connection, ledger: sa.Table, changes: Sequence[Change]) -> None:
    """Set ``changed_at`` of each URL to the later of its value and the change's time, set-based.

    Runs in the caller's transaction. Rows are written in (url_hash, host)
    order, the order of the ledger's other writers, so two passes never
    deadlock. A URL without a ledger entry gets one (fingerprint and
    ``last_success_at`` empty, as for a URL never delivered).
    """
    latest: dict[tuple[str, str], Change] = {}
    for change in changes:
        key = (change[2], change[0])
        known = latest.get(key)
        if known is None or as_utc(change[3]) > as_utc(known[3]):
            latest[key] = change
    if not latest:
        return
    values = [{"host": c[0], "url": c[1], "url_hash": c[2], "changed_at": as_utc(c[3])}
              for _key, c in sorted(latest.items())]
    dialect = dialect_name(connection)
    for part in chunks(values, ROWS_PER_STATEMENT):
        connection.execute(_upsert(ledger, dialect), part)


def _upsert(ledger: sa.Table, dialect: str) -> Any:
    """INSERT … ON CONFLICT/DUPLICATE KEY that keeps the later ``changed_at``."""
    old = ledger.c.changed_at
    if dialect == "mysql":
        from sqlalchemy.dialects import mysql

        statement = mysql.insert(ledger)
        new = statement.inserted.changed_at
        return statement.on_duplicate_key_update(changed_at=sa.case((old.is_(None), new), (new > old, new), else_=old))
    if dialect == "postgresql":
        from sqlalchemy.dialects import postgresql

        pg = postgresql.insert(ledger)
        return pg.on_conflict_do_update(
            index_elements=["url_hash", "host"],
            set_={"changed_at": sa.case((old.is_(None), pg.excluded.changed_at),
                                        (pg.excluded.changed_at > old, pg.excluded.changed_at), else_=old)},
        )
    from sqlalchemy.dialects import sqlite

    lite = sqlite.insert(ledger)
    return lite.on_conflict_do_update(
        index_elements=["url_hash", "host"],
        set_={"changed_at": sa.case((old.is_(None), lite.excluded.changed_at),
                                    (lite.excluded.changed_at > old, lite.excluded.changed_at), else_=old)},
    )


def has_open_updates(connection: sa.Connection, state: Any) -> bool:
    """Whether any ``update`` row waits unclaimed and unattempted: else :func:`change_times` skips the queue."""
    queue, inbox = state.models.queue, state.models.inbox
    return connection.execute(
        sa.select(queue.c.id).where(queue.c.action == "update", queue.c.status.in_(("pending", "processing")),
                                    queue.c.attempts == 0).limit(1)
    ).first() is not None or connection.execute(
        sa.select(inbox.c.id).where(inbox.c.action == "update").limit(1)  # saved, not merged yet
    ).first() is not None


#: With INDEXNOW_VERIFY: the last verdicts whose page the sitemap leaves out (not indexable, or gone).
NOT_LISTED = frozenset({*SKIPPED, "gone"})


def change_times(connection: sa.Connection, state: Any, keys: Sequence[tuple[str, str]], *,
                 queue_too: bool = True, withheld: set[tuple[str, str]] | None = None,
                 ) -> dict[tuple[str, str], datetime]:
    """(host, url_hash) → the last change seen of each of ``keys``, where known.

    The ledger's ``changed_at``, or the ``updated_at`` of an open ``update``
    row not yet attempted (an event the pass has not claimed yet), whichever
    is later (``queue_too=False``: the ledger only, when no such row exists).
    ``withheld`` (with INDEXNOW_VERIFY) receives the keys whose last verdict
    is in :data:`NOT_LISTED`: the pass does not send them, so the sitemap does
    not list them. Indexed look-ups (the ledger's and the queue's unique keys
    start with ``url_hash``); on PostgreSQL the hashes go as one array parameter.
    """
    ledger, queue = state.models.url_state, state.models.queue
    wanted = set(keys)
    times: dict[tuple[str, str], datetime] = {}
    postgres = dialect_name(connection) == "postgresql"
    verdicts = withheld is not None
    columns = [ledger.c.host, ledger.c.url_hash, ledger.c.changed_at] + ([ledger.c.verdict] if verdicts else [])
    known = ledger.c.changed_at.is_not(None)
    if verdicts:
        known = sa.or_(known, ledger.c.verdict.is_not(None))
    inboxed: list[Any] = []
    if queue_too:  # events saved in the site's transactions, not merged yet: the inbox is small, read once
        inbox = state.models.inbox
        inboxed = [(host, url_hash(url), when) for host, url, when in connection.execute(
            sa.select(inbox.c.host, inbox.c.url, inbox.c.created_at).where(inbox.c.action == "update"))]
    for part in chunks(sorted({digest for _host, digest in wanted}), IN_LIST_SIZE):
        found = list(inboxed) if part and inboxed else []
        inboxed = []
        for row in connection.execute(sa.select(*columns).where(_among(ledger.c.url_hash, part, postgres), known)):
            if withheld is not None and row.verdict and row.verdict.split(":", 1)[0] in NOT_LISTED:
                withheld.add((row.host, row.url_hash))
            if row.changed_at is not None:
                found.append((row.host, row.url_hash, row.changed_at))
        if queue_too:
            found += connection.execute(
                sa.select(queue.c.host, queue.c.url_hash, queue.c.updated_at).where(
                    _among(queue.c.url_hash, part, postgres), queue.c.action == "update",
                    queue.c.status.in_(("pending", "processing")), queue.c.attempts == 0)
            ).all()
        for host, digest, when in found:
            key = (host, digest)
            if key not in wanted:
                continue
            when = as_utc(when)
            if key not in times or when > times[key]:
                times[key] = when
    return times


def _among(column: Any, values: Sequence[str], postgres: bool) -> Any:
    """``column IN (values)``; on PostgreSQL ``= ANY(array)``: one parameter, one cached statement."""
    if postgres:
        return column == sa.any_(sa.bindparam("hashes", list(values), type_=ARRAY(sa.String())))
    return column.in_(values)
