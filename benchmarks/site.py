"""Apps, tables and the "floor" implementations the benchmarks compare against.

Every app gets its own table prefix (``bench<run>_<n>_``); :func:`drop_all`
removes every table the run made, whatever happened.
"""

from __future__ import annotations

import os
import uuid
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

import requests
import sqlalchemy as sa
from flask import Flask
from flask_sqlalchemy import SQLAlchemy

from flask_indexnow import IndexNow
from flask_indexnow.state import IndexNowState
from flask_indexnow.tables import UTCDateTime

KEY = "b3nchk3y0f1ndexn0w"
RUN = uuid.uuid4().hex[:6]
POSTGRES_URL = os.environ.get("INDEXNOW_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
MYSQL_URL = os.environ.get("INDEXNOW_TEST_MYSQL_URL", "mysql+pymysql://root@127.0.0.1:3306/test")
_made: list[tuple[Any, list[sa.Table], Flask]] = []
_count = 0


@dataclass
class Site:
    """One app with the extension, on its own tables."""

    app: Flask
    db: SQLAlchemy
    indexnow: IndexNow

    @property
    def state(self) -> IndexNowState:
        state: IndexNowState = self.app.extensions["indexnow"]
        return state

    @property
    def queue(self) -> sa.Table:
        table: sa.Table = self.state.models.Queue.__table__
        return table

    @property
    def history(self) -> sa.Table:
        table: sa.Table = self.state.models.History.__table__
        return table

    def engine(self) -> sa.Engine:
        with self.app.app_context():
            engine: sa.Engine = self.db.engine
            return engine

    def count(self, table: sa.Table) -> int:
        with self.engine().connect() as connection:
            return int(connection.execute(sa.select(sa.func.count()).select_from(table)).scalar_one())

    def clear(self) -> None:
        with self.engine().begin() as connection:
            for table in self.state.models.tables:
                connection.execute(table.delete())


def config_for(database_url: str, endpoint_url: str, prefix: str, **extra: Any) -> dict[str, Any]:
    return {
        "SQLALCHEMY_DATABASE_URI": database_url,
        "INDEXNOW_KEY": KEY,
        "INDEXNOW_ENDPOINT": endpoint_url,
        "INDEXNOW_ALLOW_PRIVATE_ENDPOINT": True,
        "INDEXNOW_TABLE_PREFIX": prefix,
        "INDEXNOW_QUEUE_ENABLED": False,
        "INDEXNOW_ALLOWED_HOSTS": "*",  # URLs of many made-up hosts
        **extra,
    }


def new_prefix() -> str:
    global _count
    _count += 1
    return f"bench{RUN}_{_count}_"


def build(database_url: str, endpoint_url: str, prefix: str | None = None, *, create: bool = True,
          **extra: Any) -> Site:
    """An app with the extension on fresh tables (``prefix``: share another site's tables)."""
    app = Flask("bench")
    app.config.update(config_for(database_url, endpoint_url, prefix or new_prefix(), **extra))
    db = SQLAlchemy()
    db.init_app(app)
    indexnow = IndexNow(app, db=db)
    site = Site(app, db, indexnow)
    if create and prefix is None:
        with app.app_context():
            tables = site.state.models.tables
            db.metadata.create_all(db.engine, tables=tables)
            _made.append((db, tables, app))
    return site


def register(db: Any, tables: list[sa.Table], app: Flask) -> None:
    """Have :func:`drop_all` drop ``tables`` (made by a benchmark on its own) at the end."""
    _made.append((db, tables, app))


def drop_all() -> None:
    """Drop every table the run created."""
    for db, tables, app in reversed(_made):
        try:
            with app.app_context():
                db.session.remove()
                db.metadata.drop_all(db.engine, tables=tables)
                db.engine.dispose()
        except Exception as exc:  # noqa: BLE001 (clean up what can be cleaned)
            print(f"warning: could not drop {[t.name for t in tables]}: {exc}")
    _made.clear()


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def fill(site: Site, count: int, *, hosts: int = 20, tag: str = "aaaa", waiting: bool = False,
         engines: tuple[str, ...] = ("",)) -> None:
    """Insert ``count`` pending rows in one INSERT … SELECT (no Python loop), hosts interleaved.

    ``waiting``: available a year from now, so no pass takes them. ``tag`` (4
    characters) keeps URLs of separate fills apart. ``engines``: the queue
    rows' ``engine`` values, one row per URL and engine ("": the only engine;
    endpoint URLs with INDEXNOW_ENDPOINTS).
    """
    assert len(tag) == 4
    engine = site.engine()
    dialect = engine.dialect.name
    now = utcnow()
    at = now + timedelta(days=365) if waiting else now - timedelta(seconds=1)
    q = site.queue.name
    if dialect == "postgresql":
        source = "FROM generate_series(1, :n) AS s(g)"
        hash_ = ":tag || lpad(g::text, 60, '0')"
        text = "g::text"
    elif dialect == "sqlite":
        source = "FROM s"
        hash_ = ":tag || printf('%060d', g)"
        text = "g"
    elif dialect in ("mysql", "mariadb"):
        source = "FROM s"
        hash_ = "CONCAT(:tag, LPAD(g, 60, '0'))"
        text = "g"
    else:
        raise ValueError(f"fill() supports PostgreSQL, SQLite and MariaDB, not {dialect}")
    recursive = "WITH RECURSIVE s(g) AS (SELECT 1 UNION ALL SELECT g + 1 FROM s WHERE g < :n) "
    if dialect in ("mysql", "mariadb"):
        host = f"CONCAT('site', g % {int(hosts)}, '.example.com')"
        url = f"CONCAT('https://', {host}, '/', :tag, '/', {text})"
    else:
        host = f"'site' || (g % {int(hosts)}) || '.example.com'"
        url = f"'https://' || {host} || '/' || :tag || '/' || {text}"
    sql = (
        f"INSERT INTO {q} (host, url, url_hash, action, status, attempts, available_at, created_at, updated_at, "
        "engine) "
        + (recursive if dialect != "postgresql" else "")
        + f"SELECT {host}, {url}, {hash_}, "
        f"'update', 'pending', 0, :at, :now, :now, :engine {source}"
    )
    statement = sa.text(sql).bindparams(
        sa.bindparam("at", type_=UTCDateTime()), sa.bindparam("now", type_=UTCDateTime())
    )
    with engine.begin() as connection:
        if dialect in ("mysql", "mariadb"):  # this session only: the recursive CTE counts to ``count``
            connection.execute(sa.text(f"SET SESSION max_recursive_iterations = {int(count) + 1}"))
        for engine_name in engines:
            connection.execute(statement, {"n": count, "tag": tag, "at": at, "now": now, "engine": engine_name})
    if dialect == "postgresql":
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            connection.execute(sa.text(f"ANALYZE {q}"))  # what autovacuum does after a bulk load


# -- the floor: the same work with bare SQL and bare requests --------------------------------


def _param(dialect: str) -> str:
    return "?" if dialect == "sqlite" else "%s"


def _db_time(dialect: str, value: datetime) -> Any:
    naive = value.astimezone(timezone.utc).replace(tzinfo=None)
    return naive.isoformat(sep=" ") if dialect == "sqlite" else naive


def floor_drain(site: Site, endpoint_url: str, batch: int, passes: int | None = None) -> int:
    """Move due rows like a pass, with nothing but DB-API calls and ``requests``.

    Per batch: one SELECT of the oldest due rows; then per host one bare POST
    and one transaction that executemany-DELETEs the rows and
    executemany-INSERTs their history. Returns how many rows it moved.
    """
    engine = site.engine()
    dialect = engine.dialect.name
    p = _param(dialect)
    q, h = site.queue.name, site.history.name
    moved = 0
    raw = engine.raw_connection()
    try:
        cursor = raw.cursor()
        with requests.Session() as http:
            done = 0
            while passes is None or done < passes:
                done += 1
                now = utcnow()
                cursor.execute(
                    f"SELECT id, host, url, action FROM {q} WHERE status = 'pending' AND available_at <= {p} "
                    f"ORDER BY available_at, id LIMIT {p}",
                    (_db_time(dialect, now), batch),
                )
                rows = cursor.fetchall()
                raw.commit()
                if not rows:
                    break
                by_host: dict[str, list[Any]] = defaultdict(list)
                for row in rows:
                    by_host[row[1]].append(row)
                for host, items in by_host.items():
                    response = http.post(endpoint_url, json={
                        "host": host, "key": KEY, "keyLocation": f"https://{host}/{KEY}.txt",
                        "urlList": [item[2] for item in items],
                    }, timeout=10)
                    response.raise_for_status()
                    stamp = _db_time(dialect, utcnow())
                    cursor.executemany(f"DELETE FROM {q} WHERE id = {p}", [(item[0],) for item in items])
                    cursor.executemany(
                        f"INSERT INTO {h} (host, url, action, status, http_status, attempts, created_at) "
                        f"VALUES ({p}, {p}, {p}, 'success', {p}, 1, {p})",
                        [(host, item[2], item[3], response.status_code, stamp) for item in items],
                    )
                    raw.commit()
                moved += len(rows)
    finally:
        raw.close()
    return moved
