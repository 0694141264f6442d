"""The durable URL queue: validation, dedup upserts and the direct API.

Rows are written with one set-based upsert per chunk, on the database's own
"insert or update" (``ON CONFLICT`` on PostgreSQL and SQLite, ``ON DUPLICATE
KEY`` on MySQL/MariaDB), keyed by (host, url_hash), run on the driver (see
queuesql.py). A new event resets its row to a ``pending`` one: this is how the
last event wins, how a failed row is replaced, and how an event that arrives
while its row is being delivered survives: the row loses its claim token, so
the delivery under way neither deletes nor fails it. A row that waits for a
retry keeps its wait and its attempts (issue 9 §7): saving a page again does
not hammer a failing endpoint, and a page that keeps changing still fails
after INDEXNOW_MAX_ATTEMPTS.

Only writes in a transaction of the extension's own upsert the queue here;
rows that join the caller's transaction go to the inbox (:mod:`.inbox`), and
the next pass applies them with this same :func:`write_entries` (issue 18).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any, NamedTuple

import sqlalchemy as sa
from sqlalchemy.orm import Session, scoped_session

from . import claims, clock, due, inbox, queuesql, signals
from .engines import queue_engines
from .keys.scope import check_scope, split_by_scope
from .missing import is_missing_table, tables_missing_error
from .models import url_hash
from .retry import retrying
from .sqlutil import ROWS_PER_STATEMENT, chunks, dialect_name, upsert
from .state import IndexNowState, current_app_object
from .urls import check_url, check_urls

logger = logging.getLogger(__name__)

ACTIONS = ("update", "delete")
_PENDING_KEY = "indexnow_pending_due"


class Entry(NamedTuple):
    """One URL about to be queued."""

    url: str
    host: str
    action: str
    available_at: datetime
    fingerprint: str | None = None


@dataclass
class Batch:
    """URLs that share their action and due time, as parallel lists: no object per URL.

    What :func:`enqueue_many` writes; ``hosts[i]`` is the host of ``urls[i]``,
    and no URL comes twice.
    """

    urls: list[str]
    hosts: list[str]
    action: str
    available_at: datetime

    def entries(self) -> list[Entry]:
        return [Entry(url, host, self.action, self.available_at) for url, host in zip(self.urls, self.hosts)]


#: What a write reports: the URLs written and the earliest time one of them is due.
Written = tuple[list[str], "datetime | None"]


@dataclass
class EnqueueResult:
    """What :func:`enqueue_many` did: how many rows it wrote and what it refused."""

    queued: int = 0
    unchanged: int = 0
    rejected: list[tuple[str, str]] = field(default_factory=list)


def make_entry(
    state: IndexNowState,
    url: object,
    action: str = "update",
    available_at: datetime | date | None = None,
    fingerprint: str | None = None,
) -> Entry:
    """Validate one URL and build its :class:`Entry`; raises :class:`InvalidURLError`."""
    _check_action(action)
    checked = check_url(url, state.settings.allowed_hosts, state.settings.strip_query_params)
    check_scope(state.settings, checked.host, checked.url)  # a key file's directory is the key's scope
    return Entry(checked.url, checked.host, action, _due(action, available_at), fingerprint)


def _check_action(action: str) -> None:
    if action not in ACTIONS:
        raise ValueError(f"action must be 'update' or 'delete', got {action!r}")


def _due(action: str, available_at: datetime | date | None) -> datetime:
    """When a row written now for ``action`` becomes due: never in the past."""
    now = clock.utcnow()
    if available_at is not None and (isinstance(available_at, bool) or not isinstance(available_at, date)):
        # A str or a number would fail deep in the driver (or be compared as text on SQLite).
        raise TypeError(f"available_at must be a datetime, a date or None, got {type(available_at).__name__} "
                        f"{available_at!r}")
    if available_at is None or action == "delete":  # a removal never waits for a publication date
        return now
    try:
        when = clock.as_utc(available_at)
    except OverflowError:  # an aware time whose UTC form is before year 1 or after 9999
        raise ValueError(f"available_at {available_at!r} is out of range once converted to UTC") from None
    return max(when, now)


def write_entries(state: IndexNowState, executor: Any, entries: Iterable[Entry], *,
                  now: datetime | None = None) -> list[Entry]:
    """Upsert ``entries`` through ``executor`` (a Session or Connection), set-based.

    Returns the entries actually written: those skipped by the fingerprint
    ledger are left out. Nothing is committed here. ``now`` stamps the rows'
    ``created_at``/``updated_at`` (default: now; the inbox merge gives its
    events' own time, which the sitemap's lastmod reads).
    """
    latest: dict[tuple[str, str], Entry] = {}
    for entry in entries:  # within one call the last event wins too
        latest.pop((entry.host, entry.url), None)
        latest[(entry.host, entry.url)] = entry
    batch = list(latest.values())
    if not batch:
        return []
    targets = queue_engines(state)  # one row per engine (INDEXNOW_ENDPOINTS), "" with one engine
    only: dict[tuple[str, str], tuple[str, ...]] = {}
    if state.settings.resubmit_interval > 0 or any(e.fingerprint for e in batch):
        batch = _apply_ledger(state, executor, batch, only)
    table = state.models.queue
    now = now or clock.utcnow()
    connection = _connection_of(state, executor)
    if dialect_name(connection) in queuesql.SUPPORTED:
        values = sorted(
            ((e.host, e.url, url_hash(e.url), e.action, e.available_at, e.fingerprint, engine)
             for e in batch for engine in only.get((e.host, e.url), targets)),
            key=_lock_order,  # one lock order for every writer (queuesql.upsert_urls too): no deadlocks
        )
        for part in chunks(values, ROWS_PER_STATEMENT):
            queuesql.upsert_queue(connection, table, part, now)
        return batch
    rows = sorted(
        (
            {
                "host": e.host,
                "url": e.url,
                "url_hash": url_hash(e.url),
                "action": e.action,
                "status": "pending",
                "attempts": 0,
                "available_at": e.available_at,
                "claimed_at": None,
                "claim_token": None,
                "fingerprint": e.fingerprint,
                "last_error": None,
                "last_http_status": None,
                "created_at": now,
                "updated_at": now,
                "engine": engine,
            }
            for e in batch for engine in only.get((e.host, e.url), targets)
        ),
        key=lambda row: (row["host"], row["url_hash"], row["engine"]),  # one lock order: no deadlocks
    )
    for chunk in chunks(rows, ROWS_PER_STATEMENT):
        upsert(executor, table, chunk, keys=("url_hash", "host", "engine"), update=_RESET_COLUMNS)
    return batch


def _lock_order(values: queuesql.QueueValues) -> tuple[str, str]:
    """Engine, then URL (which names its host): the order every queue write locks its rows in."""
    return values[6], values[1]


def write_batch(state: IndexNowState, executor: Any, batch: Batch) -> Written:
    """Upsert ``batch`` (no URL twice) through ``executor``: :func:`write_entries` without an object per URL.

    Returns the URLs written and the earliest time one of them is due. The
    fingerprint ledger (INDEXNOW_RESUBMIT_INTERVAL only: ``enqueue_many``
    takes no fingerprints) and databases without a set-based path take
    :func:`write_entries`. Nothing is committed here.
    """
    if not batch.urls:
        return [], None
    connection = _connection_of(state, executor)
    if state.settings.resubmit_interval > 0 or dialect_name(connection) not in queuesql.SUPPORTED:
        written = write_entries(state, executor, batch.entries())
        return [e.url for e in written], min((e.available_at for e in written), default=None)
    queuesql.upsert_urls(connection, state.models.queue, batch.urls, batch.hosts, batch.action, batch.available_at,
                       queue_engines(state), clock.utcnow())
    return batch.urls, batch.available_at


def _latest(urls: list[str], hosts: list[str]) -> tuple[list[str], list[str]]:
    """``urls`` without repeats, each where it last occurs (the order :func:`write_entries` keeps)."""
    latest = dict(zip(reversed(urls), reversed(hosts)))  # a URL names its host: the URL is the key
    if len(latest) == len(urls):
        return urls, hosts
    return list(reversed(latest)), list(reversed(latest.values()))


def _connection_of(state: IndexNowState, executor: Any) -> Any:
    """The Connection of ``executor``: a Session's own, inside its transaction (or savepoint)."""
    if isinstance(executor, (Session, scoped_session)):
        return executor.connection(bind_arguments={"mapper": state.models.Queue})
    return executor


_RESET_COLUMNS = (
    "action", "status", "attempts", "available_at", "claimed_at", "claim_token",
    "fingerprint", "last_error", "last_http_status", "updated_at",
)


def _apply_ledger(
    state: IndexNowState, executor: Any, batch: list[Entry], only: dict[tuple[str, str], tuple[str, ...]]
) -> list[Entry]:
    """Skip unchanged content and hold back early resubmits.

    Content unchanged since its last delivery whose row is still open for some
    engines (INDEXNOW_ENDPOINTS: one engine accepted it, another has not yet)
    is written for those engines only, into ``only``: an engine that accepted
    a URL is not sent it again because another one is still retrying.
    """
    ledger = state.models.url_state
    queue = state.models.queue
    hashes = [url_hash(e.url) for e in batch]
    known: dict[tuple[str, str], Any] = {}
    open_rows: dict[tuple[str, str], set[str]] = {}
    for part in chunks(hashes, ROWS_PER_STATEMENT):  # bounded IN lists: databases cap bind parameters
        known.update(
            ((row.host, row.url_hash), row)
            for row in executor.execute(
                sa.select(ledger.c.host, ledger.c.url_hash, ledger.c.fingerprint, ledger.c.last_success_at)
                .where(ledger.c.url_hash.in_(part))
            )
        )
        for row in executor.execute(
            sa.select(queue.c.host, queue.c.url_hash, queue.c.engine).where(
                queue.c.url_hash.in_(part), queue.c.status.in_(("pending", "processing"))
            )
        ):
            open_rows.setdefault((row.host, row.url_hash), set()).add(row.engine)
    interval = timedelta(seconds=state.settings.resubmit_interval)
    kept = []
    for entry, digest in zip(batch, hashes):
        record = known.get((entry.host, digest))
        if entry.action == "update" and record is not None:
            if entry.fingerprint and record.fingerprint == entry.fingerprint:
                still_open = open_rows.get((entry.host, digest))
                if not still_open:
                    logger.debug("IndexNow: %s unchanged since its last delivery, not queued", entry.url)
                    continue
                only[(entry.host, entry.url)] = tuple(sorted(still_open))
            if interval and record.last_success_at is not None:
                earliest = clock.as_utc(record.last_success_at) + interval
                if earliest > entry.available_at:
                    entry = entry._replace(available_at=earliest)
        kept.append(entry)
    return kept


def after_write(state: IndexNowState, entries: list[Entry], session: Any | None) -> None:
    """Tell the tick and the listeners about rows just written.

    With a ``session`` whose transaction is still open, the cached next-due
    time is lowered only when that session commits (see :func:`flush_pending_due`).
    """
    if not entries:
        return
    by_action = {action: [e.url for e in entries if e.action == action] for action in ACTIONS}
    _announce(state, min(e.available_at for e in entries), by_action, session)


def _announce(state: IndexNowState, earliest: datetime, by_action: dict[str, list[str]], session: Any | None) -> None:
    if session is not None:
        pending = session.info.get(_PENDING_KEY)
        session.info[_PENDING_KEY] = earliest if pending is None else min(pending, earliest)
    else:
        due.lower(state, earliest)
    app = current_app_object()
    for action in ACTIONS:
        urls = by_action.get(action)
        if urls:
            signals.send_signal(signals.url_enqueued, app, urls=urls, action=action)


def flush_pending_due(state: IndexNowState, session: Any) -> None:
    """Called after ``session`` commits: publish its rows' earliest due time."""
    earliest = session.info.pop(_PENDING_KEY, None)
    if earliest is not None:
        due.lower(state, earliest)


def discard_pending_due(session: Any) -> None:
    session.info.pop(_PENDING_KEY, None)


def enqueue(
    state: IndexNowState,
    url: str,
    action: str = "update",
    available_at: datetime | None = None,
    *,
    commit: bool = True,
    fingerprint: str | None = None,
) -> str | None:
    """Queue one URL on ``db.session``; see :meth:`IndexNow.enqueue`."""
    entry = make_entry(state, url, action, available_at, fingerprint)
    if not state.settings.enabled:
        logger.debug("IndexNow is disabled: %s not queued", entry.url)
        return None

    def write(executor: Any) -> Written:
        written = write_entries(state, executor, [entry])
        return [e.url for e in written], min((e.available_at for e in written), default=None)

    # Without the ledger the write is one upsert statement, atomic on its own.
    one_statement = fingerprint is None and state.settings.resubmit_interval <= 0
    urls, _ = _write_in_session(state, state.db.session, write, lambda: [entry], action, commit,
                                one_statement=one_statement)
    return entry.url if urls else None


def enqueue_many(
    state: IndexNowState,
    urls: Iterable[object],
    action: str = "update",
    available_at: datetime | None = None,
    *,
    commit: bool = True,
) -> EnqueueResult:
    """Queue many URLs with set-based upserts; invalid ones are reported, not raised."""
    _check_action(action)
    if isinstance(urls, (str, bytes)):  # would be read as a list of one-character "URLs"
        raise TypeError(f"urls must be a list of URLs, not a single {type(urls).__name__}: "
                        "use enqueue() for one URL, or pass [url]")
    result = EnqueueResult()
    checked, hosts, result.rejected = check_urls(urls, state.settings.allowed_hosts, state.settings.strip_query_params)
    checked, hosts, out_of_scope = split_by_scope(state.settings, checked, hosts)
    result.rejected.extend(out_of_scope)
    if not state.settings.enabled or not checked:
        return result
    batch = Batch(*_latest(checked, hosts), action, _due(action, available_at))
    written, _ = _write_in_session(state, state.db.session, lambda executor: write_batch(state, executor, batch),
                                   batch.entries, action, commit)
    result.queued = len(written)
    result.unchanged = len(batch.urls) - len(written)
    return result


def _own_engine(state: IndexNowState, session: Any) -> sa.Engine | None:
    """The engine to write on alone when ``session`` holds nothing of the host's, else None.

    Nothing of the host's: no transaction begun, no object added, changed or
    deleted, and the session bound to an engine (a session bound to a
    connection shares that connection's transaction).
    """
    if isinstance(session, scoped_session):
        session = session()
    if session.in_transaction() or session.new or session.dirty or session.deleted:
        return None
    bind = session.get_bind(mapper=state.models.Queue)
    return bind if isinstance(bind, sa.Engine) else None


#: Where a single statement may run in autocommit: switching is a client-side
#: setting on these drivers (on MySQL/MariaDB it would cost two round trips).
_AUTOCOMMIT_DIALECTS = ("postgresql", "sqlite")


def _write_in_session(
    state: IndexNowState,
    session: Any,
    write: Callable[[Any], Written],
    events: Callable[[], list[Entry]],
    action: str,
    commit: bool,
    *,
    one_statement: bool = False,
) -> Written:
    """Queue rows of one ``action``: in a transaction of our own, or in ``session``'s; committed when ``commit``.

    A session that holds nothing of the host's (no transaction begun, no
    object added, changed or deleted) would commit only our rows: ``write``
    then writes the queue in a short transaction of its own on the session's
    engine, without the session's bookkeeping (a third of the CPU time of a
    single ``enqueue()``), run again after a transient refusal (issue 18: the
    worker's rule). When ``write`` is ``one_statement``, that statement runs
    in autocommit where switching costs no round trip: one round trip
    instead of three (BEGIN, the upsert, COMMIT).

    Otherwise the rows join the host's transaction, so they go to the inbox
    (:mod:`flask_indexnow.inbox`), where nothing a pass does can make the
    host's transaction wait, deadlock or fail; the next pass merges them.
    The fingerprint ledger is then read by the merge: a URL whose content is
    unchanged is reported as queued here and dropped there.
    """
    try:
        engine = _own_engine(state, session) if commit else None
        if engine is not None:
            written = _write_own(engine, write, one_statement)
        else:
            entries = events()
            inbox.write(state, _connection_of(state, session), entries)
            written = [e.url for e in entries], min((e.available_at for e in entries), default=None)
            if commit:
                session.commit()
    except Exception as exc:
        if commit:
            session.rollback()
        if is_missing_table(exc):
            raise tables_missing_error(state.prefix) from None
        raise
    urls, earliest = written
    if urls and earliest is not None:
        _announce(state, earliest, {action: urls}, None if commit else session)
    return written


def _write_own(engine: sa.Engine, write: Callable[[Any], Written], one_statement: bool) -> Written:
    """``write`` in a transaction of its own on ``engine``, again after a transient refusal (deadlock, lock
    timeout, serialization failure, "database is locked"); the last refusal is raised."""
    if one_statement and dialect_name(engine) in _AUTOCOMMIT_DIALECTS:
        def once() -> Written:
            with engine.connect() as connection:
                return write(connection.execution_options(isolation_level="AUTOCOMMIT"))

        return retrying(once)
    return claims.run(engine, write)


def retry_failed(state: IndexNowState) -> int:
    """Put every ``failed`` row back to ``pending`` with fresh attempts; return how many."""
    table = state.models.queue
    now = clock.utcnow()
    count = claims.run(state.engine(), lambda connection: connection.execute(
        sa.update(table)
        .where(table.c.status == "failed")
        .values(status="pending", attempts=0, available_at=now, last_error=None,
                last_http_status=None, claimed_at=None, claim_token=None, updated_at=now)
    ).rowcount)
    if count:
        due.lower(state, now)
    return int(count)
