"""Set-based statements on the driver: the queue upsert (the end of a batch is delivery/setsql.py).

The upsert and the end of a batch are the hot paths of the extension (every
enqueued URL goes through the first, every delivered one through the second). Through
SQLAlchemy's per-row write path (a dict and the bind processing of four
datetime columns per row, then the driver's executemany) they cost several
times what the database itself spends; here each is one statement per chunk
or per batch, its SQL text built once per table and dialect, with the values
already in the driver's own form.

Everything runs on a :class:`~sqlalchemy.engine.Connection` the caller owns,
so the caller's transaction (or savepoint) is the one written in.
"""

from __future__ import annotations

import functools
import hashlib
import operator
import sqlite3
from collections.abc import Sequence
from datetime import datetime
from itertools import chain, repeat
from typing import Any

import sqlalchemy as sa

from .clock import as_utc
from .sqlutil import ROWS_PER_STATEMENT, chunks, dialect_name, quoted_table

#: The dialects with a set-based path; others use the portable SQLAlchemy one.
SUPPORTED = ("postgresql", "sqlite", "mysql")

#: One queue row to write: host, url, url_hash, action, available_at, fingerprint, engine.
QueueValues = tuple[str, str, str, str, datetime, "str | None", str]


def driver_time(dialect: str, value: datetime) -> Any:
    """``value`` as the driver stores it in a ``UTCDateTime`` column.

    SQLite keeps SQLAlchemy's text format (always six fraction digits, so text
    order is time order); the other drivers take a naive UTC datetime.
    """
    naive = as_utc(value).replace(tzinfo=None)
    if dialect == "sqlite":
        return naive.isoformat(sep=" ", timespec="microseconds")
    return naive


# -- the queue upsert ---------------------------------------------------------------------------

_INSERT_COLUMNS = (
    "host, url, url_hash, action, status, attempts, available_at, claimed_at, claim_token, "
    "fingerprint, last_error, last_http_status, created_at, updated_at, engine"
)


def upsert_queue(connection: Any, table: sa.Table, rows: Sequence[tuple[Any, ...]], now: datetime) -> None:
    """Insert ``rows`` as fresh ``pending`` rows, or reset the rows they collide with (host, url_hash, engine).

    The reset is the one of :func:`flask_indexnow.queue.write_entries` with
    one exception (issue 9 §7): a row that waits for a retry (``pending``
    with attempts spent) keeps its wait and its attempts, so a new event
    neither makes it due before the retry time nor lets a URL that keeps
    changing escape INDEXNOW_MAX_ATTEMPTS. Only a ``failed`` row starts
    again from zero attempts. ``rows`` must not repeat a (host, url_hash, engine).
    Rows of six values (no engine, as before several engines) are for the
    first engine (``""``).
    """
    if not rows:
        return
    if len(rows[0]) == 6:
        rows = [(*row, "") for row in rows]
    dialect = dialect_name(connection)
    stamp = driver_time(dialect, now)
    params: list[Any]
    if dialect == "postgresql" and len(rows) > 1:
        columns, joined = _pg_columns(rows)
        params = [stamp, stamp, *columns]
        connection.exec_driver_sql(_upsert_sql(connection.dialect, table, dialect, 0, joined), tuple(params))
        return
    sql = _upsert_sql(connection.dialect, table, dialect, len(rows))
    if dialect == "sqlite":
        params = [stamp, stamp]
        for host, url, digest, action, available_at, fingerprint, engine in rows:
            params += (host, url, digest, action, driver_time(dialect, available_at), fingerprint, engine)
    else:
        params = []
        for host, url, digest, action, available_at, fingerprint, engine in rows:
            params += (host, url, digest, action, driver_time(dialect, available_at), fingerprint, stamp, stamp,
                       engine)
    connection.exec_driver_sql(sql, tuple(params))


# -- many URLs that share their action and due time (enqueue_many) --------------------------------

#: Rows per statement of :func:`upsert_urls` on PostgreSQL. Its values go as a
#: few joined-text parameters, so the database sets no limit; this one bounds
#: a statement's size (URLs are at most 2 kB).
PG_BULK_ROWS = 10_000
#: SQLite's cap on bound parameters before 3.32, and what is assumed where
#: Python cannot ask the connection (before 3.11).
SQLITE_OLD_VARIABLES = 999
#: Parameters :func:`upsert_urls` binds once per statement, and per row on SQLite.
_FIXED, _PER_ROW = 5, 3
#: ``sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER``, a name Python has since 3.11 (with ``getlimit``).
_SQLITE_LIMIT_VARIABLE_NUMBER = getattr(sqlite3, "SQLITE_LIMIT_VARIABLE_NUMBER", 9)
_hexdigest = operator.methodcaller("hexdigest")


def upsert_urls(
    connection: Any,
    table: sa.Table,
    urls: Sequence[str],
    hosts: Sequence[str],
    action: str,
    available_at: datetime,
    engines: Sequence[str],
    now: datetime,
) -> None:
    """:func:`upsert_queue` for URLs that share their action and due time: one row per URL and engine.

    What ``enqueue_many`` writes, without a tuple per row: only host, URL and
    (where the database does not compute it) the URL's hash travel per row,
    the rest is bound once per statement, and a statement takes up to
    :func:`bulk_rows` rows (10,000 on PostgreSQL). ``urls`` (``hosts`` are
    theirs) must not repeat. Rows are written engine by engine, each by URL:
    the lock order of every queue write (see ``queue.write_entries``), so two
    writers never deadlock. On SQLite, with one writer at a time, the order
    still matters: ids in URL order keep each host's rows together, so the
    rows a pass claims (oldest ids first) span few hosts and go in few POSTs
    (in input order, URLs that alternate between hosts would go one per POST).
    """
    if not urls:
        return
    dialect = dialect_name(connection)
    if dialect == "mysql":  # its multi-row INSERT binds every value anyway
        digests = _digests(urls)
        for engine in sorted(engines):
            rows = sorted(zip(hosts, urls, digests, repeat(action), repeat(available_at), repeat(None),
                              repeat(engine)), key=_url_order)
            for part in chunks(rows, ROWS_PER_STATEMENT):
                upsert_queue(connection, table, part, now)
        return
    pairs = sorted(zip(urls, hosts))
    urls, hosts = [url for url, _ in pairs], [host for _, host in pairs]
    in_sql = _hash_in_sql(connection)
    digests = [] if in_sql else _digests(urls)
    size = bulk_rows(connection)
    stamp, when = driver_time(dialect, now), driver_time(dialect, available_at)
    for engine in sorted(engines):
        fixed = (action, when, stamp, stamp, engine)
        for start in range(0, len(urls), size):
            window = slice(start, start + size)
            if dialect == "postgresql":
                columns = [_text_column(hosts[window]), _text_column(urls[window])]
                if not in_sql:
                    columns.append(_text_column(digests[window]))
                sql = _urls_sql(connection.dialect, table, dialect, 0, tuple(isinstance(c, str) for c in columns))
                connection.exec_driver_sql(sql, (*fixed, *columns))
            else:
                values = list(chain.from_iterable(zip(hosts[window], urls[window], digests[window])))
                sql = _urls_sql(connection.dialect, table, dialect, len(values) // _PER_ROW)
                connection.exec_driver_sql(sql, (*fixed, *values))


def bulk_rows(connection: Any) -> int:
    """Rows per statement of :func:`upsert_urls` on ``connection``'s database."""
    dialect = dialect_name(connection)
    if dialect == "postgresql":
        return PG_BULK_ROWS
    if dialect == "sqlite":
        getlimit = getattr(connection.connection.dbapi_connection, "getlimit", None)
        limit = SQLITE_OLD_VARIABLES if getlimit is None else int(getlimit(_SQLITE_LIMIT_VARIABLE_NUMBER))
        # No more: SQLite compiles a multi-row VALUES in time that grows with the square of its rows.
        return max(1, min(ROWS_PER_STATEMENT, (limit - _FIXED) // _PER_ROW))
    return ROWS_PER_STATEMENT


def _hash_in_sql(connection: Any) -> bool:
    """Whether the database computes ``url_hash`` itself: PostgreSQL has ``sha256()`` since 11."""
    return dialect_name(connection) == "postgresql" and connection.dialect.server_version_info >= (11,)


def _digests(urls: Sequence[str]) -> list[str]:
    """``models.url_hash`` of every URL (mapped in C: no Python frame per URL)."""
    return list(map(_hexdigest, map(hashlib.sha256, map(str.encode, urls))))


def _url_order(row: QueueValues) -> str:
    return row[1]


@functools.lru_cache(maxsize=64)
def _urls_sql(sa_dialect: Any, table: sa.Table, dialect: str, count: int, joined: tuple[bool, ...] = ()) -> str:
    """The statement of :func:`upsert_urls`: ``count`` rows (SQLite), or ``joined`` text columns (PostgreSQL;
    two columns: the database hashes the URLs).

    The first five parameters are the action, the due time, created/updated
    and the engine; then the rows' values.
    """
    q = quoted_table(sa_dialect, table)
    p = "?" if sa_dialect.paramstyle == "qmark" else "%s"
    if dialect == "postgresql":
        arrays = ", ".join(f"string_to_array({p}, E'\\x1f')" if text else f"{p}::text[]" for text in joined)
        hashed = len(joined) == 2
        digest = "encode(sha256(convert_to(v.u, 'UTF8')), 'hex')" if hashed else "v.x"
        source = (
            f"SELECT v.h, v.u, {digest}, {p}::text, 'pending', 0, {p}::timestamp, NULL, NULL, NULL, NULL, NULL, "
            f"{p}::timestamp, {p}::timestamp, {p}::text FROM unnest({arrays}) AS v(h, u{'' if hashed else ', x'})"
        )
    else:
        # "WHERE true": SQLite's parser needs it between a SELECT and ON CONFLICT.
        source = (
            f"SELECT column1, column2, column3, {p}, 'pending', 0, {p}, NULL, NULL, NULL, NULL, NULL, {p}, {p}, {p} "
            f"FROM (VALUES {', '.join([f'({p}, {p}, {p})'] * count)}) WHERE true"
        )
    return f"INSERT INTO {q} ({_INSERT_COLUMNS}) {source} {_on_conflict(q)}"


#: Joins a column's values into one text parameter for PostgreSQL (split there by
#: ``string_to_array``): one string per column instead of an array the driver
#: builds element by element. A value that holds it goes as a real array.
_SEP = "\x1f"


def _pg_columns(rows: Sequence[QueueValues]) -> tuple[list[Any], tuple[bool, ...]]:
    """The seven columns of ``rows`` as PostgreSQL parameters, and which are joined text (see :data:`_SEP`)."""
    hosts, urls, digests, actions, times, fingerprints, engines = zip(*rows)
    stamps: dict[datetime, str] = {}
    texts = []
    for when in times:  # nearly always one value for the whole chunk
        text = stamps.get(when)
        if text is None:
            text = stamps[when] = as_utc(when).replace(tzinfo=None).isoformat(sep=" ")
        texts.append(text)
    columns: list[Any] = []
    for values in (hosts, urls, digests, actions, texts):
        columns.append(_text_column(values))
    columns.append([] if not any(fingerprints) else list(fingerprints))  # unnest pads a short array with NULL
    columns.append(list(engines))
    return columns, tuple(isinstance(value, str) for value in columns[:5])


def _text_column(values: Sequence[str]) -> str | list[str]:
    """``values`` joined by :data:`_SEP`, or as a list when a value holds it."""
    joined = _SEP.join(values)
    return joined if joined.count(_SEP) == len(values) - 1 else list(values)


@functools.lru_cache(maxsize=64)
def _upsert_sql(sa_dialect: Any, table: sa.Table, dialect: str, count: int, joined: tuple[bool, ...] = ()) -> str:
    """The upsert of ``count`` rows into ``table``, in the driver's parameter style.

    PostgreSQL takes one parameter per column, whatever the count: ``joined``
    says which of the first five are joined text rather than arrays.
    """
    q = quoted_table(sa_dialect, table)
    p = "?" if sa_dialect.paramstyle == "qmark" else "%s"
    row = f"({p}, {p}, {p}, {p}, 'pending', 0, {p}, NULL, NULL, {p}, NULL, NULL, {p}, {p}, {p})"
    if dialect == "mysql":
        return f"INSERT INTO {q} ({_INSERT_COLUMNS}) VALUES {', '.join([row] * count)} {_on_duplicate_key(q)}"
    if dialect == "postgresql" and count == 1:  # one row: plain parameters, the cheapest to send
        return f"INSERT INTO {q} ({_INSERT_COLUMNS}) VALUES {row} {_on_conflict(q)}"
    if dialect == "postgresql":
        arrays = ", ".join(
            f"string_to_array({p}, E'\\x1f')" if text else f"{p}::text[]" for text in joined
        )
        source = (
            f"SELECT v.h, v.u, v.x, v.a, 'pending', 0, v.t::timestamp, NULL, NULL, v.f, NULL, NULL, "
            f"{p}::timestamp, {p}::timestamp, v.e "
            f"FROM unnest({arrays}, {p}::text[], {p}::text[]) AS v(h, u, x, a, t, f, e)"
        )
    else:
        values = ", ".join([f"({p}, {p}, {p}, {p}, {p}, {p}, {p})"] * count)
        # "WHERE true": SQLite's parser needs it between a SELECT and ON CONFLICT.
        source = (
            "SELECT column1, column2, column3, column4, 'pending', 0, column5, NULL, NULL, column6, "
            f"NULL, NULL, {p}, {p}, column7 FROM (VALUES {values}) WHERE true"
        )
    return f"INSERT INTO {q} ({_INSERT_COLUMNS}) {source} {_on_conflict(q)}"


def _on_conflict(q: str) -> str:
    """The reset of a colliding row (PostgreSQL, SQLite): a row that waits for a retry keeps its wait
    and its attempts; a failed one starts over."""
    retry_wait = f"{q}.status = 'pending' AND {q}.attempts > 0"
    return (
        "ON CONFLICT (url_hash, host, engine) DO UPDATE SET "
        f"available_at = CASE WHEN {retry_wait} AND {q}.available_at > excluded.available_at "
        f"THEN {q}.available_at ELSE excluded.available_at END, "
        f"attempts = CASE WHEN {q}.status = 'failed' THEN 0 ELSE {q}.attempts END, "
        f"last_error = CASE WHEN {q}.status = 'failed' THEN NULL ELSE {q}.last_error END, "
        f"last_http_status = CASE WHEN {q}.status = 'failed' THEN NULL ELSE {q}.last_http_status END, "
        "action = excluded.action, claimed_at = NULL, claim_token = NULL, "
        "fingerprint = excluded.fingerprint, updated_at = excluded.updated_at, status = 'pending'"
    )


def _on_duplicate_key(q: str) -> str:
    """:func:`_on_conflict` for MySQL/MariaDB.

    ON DUPLICATE KEY UPDATE assigns left to right and later terms see earlier
    results: everything that reads the old status comes first.
    """
    retry_wait = f"{q}.status = 'pending' AND {q}.attempts > 0"
    return (
        "ON DUPLICATE KEY UPDATE "
        f"available_at = IF({retry_wait} AND {q}.available_at > VALUES(available_at), "
        f"{q}.available_at, VALUES(available_at)), "
        f"attempts = IF({q}.status = 'failed', 0, {q}.attempts), "
        f"last_error = IF({q}.status = 'failed', NULL, {q}.last_error), "
        f"last_http_status = IF({q}.status = 'failed', NULL, {q}.last_http_status), "
        "action = VALUES(action), claimed_at = NULL, claim_token = NULL, "
        "fingerprint = VALUES(fingerprint), updated_at = VALUES(updated_at), status = 'pending'"
    )
