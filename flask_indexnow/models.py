"""The extension's tables, defined on the application's own ``db``.

The classes are built by :func:`get_models` once per ``(db, prefix)`` and
cached, so ``db.create_all()`` and Flask-Migrate see them, and several apps (or
test apps) can share one ``db`` without "Table already defined" errors.

Every hot query has its index: the claim (status, available_at, id), the dedup
look-up (host, url_hash), the stale sweep (status, claimed_at), the completion
of a batch (claim_token, host, id) and history by time. The three queue
indexes are partial on PostgreSQL and SQLite (pending, processing and claimed
rows only).
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import mysql
from sqlalchemy.engine import Dialect

from .clock import as_utc, utcnow


class UTCDateTime(sa.types.TypeDecorator[datetime]):
    """Stores UTC without a zone (portable), hands back aware UTC datetimes.

    Naive values are taken as UTC. MySQL/MariaDB get microsecond
    precision, which the claim order and the dedup updates rely on.
    """

    impl = sa.DateTime
    cache_ok = True

    # Alembic autogenerate (``flask db migrate``) writes a column type of a
    # module outside SQLAlchemy as ``flask_indexnow.models.UTCDateTime()``, a
    # name the migration never imports: ``flask db upgrade`` then fails with a
    # NameError. Declared as a SQLAlchemy type, it is written as ``sa.`` + its
    # repr, which is the DDL it stands for: a migration needs the column, not
    # the conversion, and runs as generated.
    __module__ = "sqlalchemy.types"

    def __repr__(self) -> str:
        return "DateTime().with_variant(sa.dialects.mysql.DATETIME(fsp=6), 'mysql', 'mariadb')"

    def load_dialect_impl(self, dialect: Dialect) -> sa.types.TypeEngine[Any]:
        if dialect.name in ("mysql", "mariadb"):
            return dialect.type_descriptor(mysql.DATETIME(fsp=6))
        return dialect.type_descriptor(sa.DateTime())

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return as_utc(value).replace(tzinfo=None)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return as_utc(value)


#: Autoincrementing 64-bit ids, except on SQLite, where only INTEGER is the rowid.
BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def url_hash(url: str) -> str:
    """The fixed-width key that makes (host, url) unique on every database.

    URLs may be 2,048 characters, longer than MySQL can index; their SHA-256 can.
    """
    return hashlib.sha256(url.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Models:
    """The tables of one ``(db, prefix)``, and their model classes.

    The library itself works on the typed tables (``queue``, ``history``,
    ``schedule``, ``job``, ``url_state``: :class:`sqlalchemy.Table` objects
    on the app's ``db.metadata``). The ORM classes (``Queue`` …) are built on
    the app's own ``db.Model`` for each table prefix, so their type is only
    known at run time; they are there for the app's own queries.
    """

    Queue: Any
    History: Any
    Schedule: Any
    Job: Any
    URLState: Any
    queue: sa.Table
    history: sa.Table
    schedule: sa.Table
    job: sa.Table
    url_state: sa.Table

    @property
    def tables(self) -> list[sa.Table]:
        return [self.queue, self.history, self.schedule, self.job, self.url_state]


_registry: dict[tuple[int, str], Models] = {}
_registry_lock = threading.Lock()


def get_models(db: Any, prefix: str = "") -> Models:
    """Return the model classes for ``db`` and table ``prefix``, building them once."""
    key = (id(db), prefix)
    with _registry_lock:
        models = _registry.get(key)
        if models is None or models.queue.metadata is not db.metadata:
            models = _registry[key] = _build(db, prefix)
        return models


def _where(condition: str) -> dict[str, Any]:
    """The keyword arguments that make an index partial on PostgreSQL and SQLite."""
    clause = sa.text(condition)
    return {"postgresql_where": clause, "sqlite_where": clause}


def _build(db: Any, prefix: str) -> Models:
    suffix = "".join(part.capitalize() for part in prefix.split("_")) if prefix else ""

    def name(base: str) -> str:
        return f"{prefix}{base}"

    def model(class_name: str, table: str, attrs: dict[str, Any], *args: Any) -> Any:
        attrs = {"__tablename__": name(table), "__table_args__": args, **attrs}
        return type(f"{class_name}{suffix}", (db.Model,), attrs)

    def now_column(**kw: Any) -> sa.Column[Any]:
        return sa.Column(UTCDateTime(), nullable=False, default=utcnow, **kw)

    queue = model(
        "IndexNowQueue",
        "indexnow_queue",
        {
            "__doc__": "A URL waiting to be submitted: one row per (host, url, engine).",
            "id": sa.Column(BigId, primary_key=True, autoincrement=True),
            "host": sa.Column(sa.String(255), nullable=False),
            "url": sa.Column(sa.String(2048), nullable=False),
            "url_hash": sa.Column(sa.String(64), nullable=False),
            # The engine the row goes to: "" for the first (or only) one, else its
            # endpoint URL (INDEXNOW_ENDPOINTS); see engines.py.
            "engine": sa.Column(sa.String(255), nullable=False, default="", server_default=""),
            "action": sa.Column(sa.String(10), nullable=False, default="update"),
            "status": sa.Column(sa.String(12), nullable=False, default="pending"),
            "attempts": sa.Column(sa.Integer, nullable=False, default=0),
            "available_at": now_column(),
            "claimed_at": sa.Column(UTCDateTime()),
            "claim_token": sa.Column(sa.String(32)),
            "fingerprint": sa.Column(sa.String(128)),
            "last_error": sa.Column(sa.String(1000)),
            "last_http_status": sa.Column(sa.Integer),
            "created_at": now_column(),
            "updated_at": now_column(onupdate=utcnow),
        },
        sa.UniqueConstraint("url_hash", "host", "engine", name=name("uq_indexnow_queue_url")),
        # Partial where the database has them (PostgreSQL, SQLite): each index holds
        # only the rows its query looks for, so a million waiting, failed or claimed
        # rows cost the others nothing. MySQL/MariaDB ignore the WHERE: full indexes.
        # The queries write the status as a literal, which the planners need to use them.
        sa.Index(name("ix_indexnow_queue_claim"), "status", "available_at", "id",
                 **_where("status = 'pending'")),
        sa.Index(name("ix_indexnow_queue_stale"), "status", "claimed_at", **_where("status = 'processing'")),
        # The end of a batch: (claim_token, host, id range), see setsql.finish_batch.
        sa.Index(name("ix_indexnow_queue_token"), "claim_token", "host", "id",
                 **_where("claim_token IS NOT NULL")),
    )
    history = model(
        "IndexNowHistory",
        "indexnow_history",
        {
            "__doc__": "One delivery attempt of one URL and how it ended.",
            "id": sa.Column(BigId, primary_key=True, autoincrement=True),
            "host": sa.Column(sa.String(255), nullable=False),
            "url": sa.Column(sa.String(2048), nullable=False),
            "action": sa.Column(sa.String(10), nullable=False),
            "status": sa.Column(sa.String(12), nullable=False),
            "http_status": sa.Column(sa.Integer),
            "error": sa.Column(sa.String(1000)),
            "attempts": sa.Column(sa.Integer, nullable=False, default=1),
            "created_at": now_column(),
            # The endpoint URL that answered (None for rows older than the column).
            "engine": sa.Column(sa.String(255)),
        },
        sa.Index(name("ix_indexnow_history_created"), "created_at"),
        sa.Index(name("ix_indexnow_history_status"), "status", "created_at"),
        sa.Index(name("ix_indexnow_history_host"), "host", "created_at"),
    )
    schedule = model(
        "IndexNowSchedule",
        "indexnow_schedules",
        {
            "__doc__": "A recurring job: when it next runs and what it dispatches.",
            "id": sa.Column(BigId, primary_key=True, autoincrement=True),
            "handler": sa.Column(sa.String(191), nullable=False, unique=True),
            "payload": sa.Column(sa.JSON),
            "queue": sa.Column(sa.String(100), nullable=False, default="default"),
            "kind": sa.Column(sa.String(10), nullable=False),
            "expression": sa.Column(sa.String(255), nullable=False),
            "timezone": sa.Column(sa.String(64), nullable=False, default="UTC"),
            "overlap": sa.Column(sa.String(10), nullable=False, default="allow"),
            "next_run": sa.Column(UTCDateTime(), nullable=False),
            "last_run": sa.Column(UTCDateTime()),
            # Interval schedules count occurrences from here (calendar months never drift).
            "anchor": sa.Column(UTCDateTime()),
            "enabled": sa.Column(sa.Boolean, nullable=False, default=True),
            "created_at": now_column(),
        },
        sa.Index(name("ix_indexnow_schedules_due"), "enabled", "next_run"),
    )
    job = model(
        "IndexNowJob",
        "indexnow_jobs",
        {
            "__doc__": "One run of a handler, with its own attempts and retry.",
            "id": sa.Column(BigId, primary_key=True, autoincrement=True),
            "handler": sa.Column(sa.String(191), nullable=False),
            "queue": sa.Column(sa.String(100), nullable=False, default="default"),
            "payload": sa.Column(sa.JSON),
            "status": sa.Column(sa.String(12), nullable=False, default="pending"),
            "attempts": sa.Column(sa.Integer, nullable=False, default=0),
            "max_attempts": sa.Column(sa.Integer, nullable=False, default=3),
            "available_at": now_column(),
            "claimed_at": sa.Column(UTCDateTime()),
            "claim_token": sa.Column(sa.String(32)),
            "occurrence_key": sa.Column(sa.String(255)),
            "last_error": sa.Column(sa.String(2000)),
            "created_at": now_column(),
            "finished_at": sa.Column(UTCDateTime()),
        },
        sa.UniqueConstraint("occurrence_key", name=name("uq_indexnow_jobs_occurrence")),
        # The claim's ORDER BY must be served by an index: otherwise MySQL/MariaDB
        # sort the due rows and lock every one of them, and concurrent workers'
        # SKIP LOCKED claims find nothing while one claim is open.
        sa.Index(name("ix_indexnow_jobs_claim"), "status", "available_at", "id"),
        sa.Index(name("ix_indexnow_jobs_queue_claim"), "status", "queue", "available_at", "id"),
        sa.Index(name("ix_indexnow_jobs_handler"), "handler", "status"),
        sa.Index(name("ix_indexnow_jobs_stale"), "status", "claimed_at"),
        sa.Index(name("ix_indexnow_jobs_finished"), "finished_at"),
    )
    url_state = model(
        "IndexNowURL",
        "indexnow_urls",
        {
            "__doc__": "What was last delivered for a URL: the ledger behind fingerprints and resubmit intervals.",
            "id": sa.Column(BigId, primary_key=True, autoincrement=True),
            "host": sa.Column(sa.String(255), nullable=False),
            "url": sa.Column(sa.String(2048), nullable=False),
            "url_hash": sa.Column(sa.String(64), nullable=False),
            "fingerprint": sa.Column(sa.String(128)),
            "last_success_at": sa.Column(UTCDateTime()),
        },
        sa.UniqueConstraint("url_hash", "host", name=name("uq_indexnow_urls_url")),
    )
    return Models(
        Queue=queue, History=history, Schedule=schedule, Job=job, URLState=url_state,
        queue=queue.__table__, history=history.__table__, schedule=schedule.__table__, job=job.__table__,
        url_state=url_state.__table__,
    )
