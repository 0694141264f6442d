"""The extension's tables, as typed :class:`sqlalchemy.Table` objects on the app's metadata.

The library works on these tables directly (Core statements, set-based SQL);
:mod:`flask_indexnow.models` maps its ORM classes onto them for the app's
own queries. Each table is built once per ``(db, prefix)`` by
:func:`build_tables`, so ``db.create_all()`` and Flask-Migrate see them.

Every hot query has its index: the claim (status, available_at, id), the dedup
look-up (host, url_hash), the stale sweep (status, claimed_at), the completion
of a batch (claim_token, host, id) and history by time. The three queue
indexes are partial on PostgreSQL and SQLite (pending, processing and claimed
rows only).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, NamedTuple

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


class Tables(NamedTuple):
    """The tables of one table prefix."""

    queue: sa.Table
    history: sa.Table
    schedule: sa.Table
    job: sa.Table
    url_state: sa.Table
    totals: sa.Table
    schedule_run: sa.Table
    inbox: sa.Table


def build_tables(metadata: sa.MetaData, prefix: str = "") -> Tables:
    """Define the tables with names starting with ``prefix`` on ``metadata``."""
    return Tables(
        queue_table(metadata, prefix),
        history_table(metadata, prefix),
        schedule_table(metadata, prefix),
        job_table(metadata, prefix),
        url_state_table(metadata, prefix),
        totals_table(metadata, prefix),
        schedule_run_table(metadata, prefix),
        inbox_table(metadata, prefix),
    )


def _now_column(name: str, **kw: Any) -> sa.Column[datetime]:
    return sa.Column(name, UTCDateTime(), nullable=False, default=utcnow, **kw)


def _partial(condition: str) -> dict[str, Any]:
    """The keyword arguments that make an index partial on PostgreSQL and SQLite."""
    clause = sa.text(condition)
    return {"postgresql_where": clause, "sqlite_where": clause}


def queue_table(metadata: sa.MetaData, prefix: str = "") -> sa.Table:
    """A URL waiting to be submitted: one row per (host, url, engine)."""
    return sa.Table(
        f"{prefix}indexnow_queue",
        metadata,
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("url", sa.String(2048), nullable=False),
        sa.Column("url_hash", sa.String(64), nullable=False),
        # The engine the row goes to: "" for the first (or only) one, else its
        # endpoint URL (INDEXNOW_ENDPOINTS); see engines.py.
        sa.Column("engine", sa.String(255), nullable=False, default="", server_default=""),
        sa.Column("action", sa.String(10), nullable=False, default="update"),
        sa.Column("status", sa.String(12), nullable=False, default="pending"),
        sa.Column("attempts", sa.Integer, nullable=False, default=0),
        _now_column("available_at"),
        sa.Column("claimed_at", UTCDateTime()),
        sa.Column("claim_token", sa.String(32)),
        sa.Column("fingerprint", sa.String(128)),
        sa.Column("last_error", sa.String(1000)),
        sa.Column("last_http_status", sa.Integer),
        _now_column("created_at"),
        _now_column("updated_at", onupdate=utcnow),
        sa.UniqueConstraint("url_hash", "host", "engine", name=f"{prefix}uq_indexnow_queue_url"),
        # Partial where the database has them (PostgreSQL, SQLite): each index holds
        # only the rows its query looks for, so a million waiting, failed or claimed
        # rows cost the others nothing. MySQL/MariaDB ignore the WHERE: full indexes.
        # The queries write the status as a literal, which the planners need to use them.
        sa.Index(f"{prefix}ix_indexnow_queue_claim", "status", "available_at", "id",
                 **_partial("status = 'pending'")),
        sa.Index(f"{prefix}ix_indexnow_queue_stale", "status", "claimed_at", **_partial("status = 'processing'")),
        # The end of a batch: (claim_token, host, id range), see setsql.finish_batch.
        sa.Index(f"{prefix}ix_indexnow_queue_token", "claim_token", "host", "id",
                 **_partial("claim_token IS NOT NULL")),
        # The failed rows: the metrics' bounded count and the status page's "recently failed" list.
        sa.Index(f"{prefix}ix_indexnow_queue_failed", "status", "updated_at", "id", **_partial("status = 'failed'")),
    )


def history_table(metadata: sa.MetaData, prefix: str = "") -> sa.Table:
    """One delivery attempt of one URL and how it ended."""
    return sa.Table(
        f"{prefix}indexnow_history",
        metadata,
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("url", sa.String(2048), nullable=False),
        sa.Column("action", sa.String(10), nullable=False),
        sa.Column("status", sa.String(12), nullable=False),
        sa.Column("http_status", sa.Integer),
        sa.Column("error", sa.String(1000)),
        sa.Column("attempts", sa.Integer, nullable=False, default=1),
        _now_column("created_at"),
        # The endpoint URL that answered (None for rows older than the column).
        sa.Column("engine", sa.String(255)),
        sa.Index(f"{prefix}ix_indexnow_history_created", "created_at"),
        sa.Index(f"{prefix}ix_indexnow_history_status", "status", "created_at"),
        sa.Index(f"{prefix}ix_indexnow_history_host", "host", "created_at"),
    )


def schedule_table(metadata: sa.MetaData, prefix: str = "") -> sa.Table:
    """A recurring job: when it next runs and what it dispatches."""
    return sa.Table(
        f"{prefix}indexnow_schedules",
        metadata,
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        # The schedule's key (default: its handler). Nullable only so that a migration
        # adds it to a table with rows as generated: a NULL name reads as the handler,
        # and the next tick's built-in check fills it in (scheduling/upgrade.py).
        sa.Column("name", sa.String(191)),
        sa.Column("handler", sa.String(191), nullable=False),
        sa.Column("payload", sa.JSON),
        sa.Column("queue", sa.String(100), nullable=False, default="default"),
        sa.Column("kind", sa.String(10), nullable=False),
        sa.Column("expression", sa.String(255), nullable=False),
        sa.Column("timezone", sa.String(64), nullable=False, default="UTC"),
        sa.Column("overlap", sa.String(10), nullable=False, default="allow"),
        sa.Column("next_run", UTCDateTime(), nullable=False),
        sa.Column("last_run", UTCDateTime()),
        # Interval schedules count occurrences from here (calendar months never drift).
        sa.Column("anchor", UTCDateTime()),
        # False while paused (by an operator, or by sync for an undeclared schedule).
        sa.Column("enabled", sa.Boolean, nullable=False, default=True),
        _now_column("created_at"),
        # -- named schedules, operator controls, declarations (issue 21) --
        # Where the schedule came from: "manual" (save(), `schedule add`), "declared" (sync), "builtin".
        sa.Column("origin", sa.String(10), nullable=False, default="manual", server_default="manual"),
        # A declared schedule that a later sync no longer found in the code (paused, kept with its history).
        sa.Column("undeclared", sa.Boolean, nullable=False, default=False, server_default=sa.false()),
        # Intervals ("10 minutes") as written; None: the default rule.
        sa.Column("misfire_grace", sa.String(100)),
        sa.Column("expires", sa.String(100)),
        sa.Column("max_attempts", sa.Integer),
        sa.UniqueConstraint("name", name=f"{prefix}uq_indexnow_schedules_name"),
        sa.Index(f"{prefix}ix_indexnow_schedules_due", "enabled", "next_run"),
    )


def job_table(metadata: sa.MetaData, prefix: str = "") -> sa.Table:
    """One run of a handler, with its own attempts and retry."""
    return sa.Table(
        f"{prefix}indexnow_jobs",
        metadata,
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("handler", sa.String(191), nullable=False),
        sa.Column("queue", sa.String(100), nullable=False, default="default"),
        sa.Column("payload", sa.JSON),
        sa.Column("status", sa.String(12), nullable=False, default="pending"),
        sa.Column("attempts", sa.Integer, nullable=False, default=0),
        sa.Column("max_attempts", sa.Integer, nullable=False, default=3),
        _now_column("available_at"),
        sa.Column("claimed_at", UTCDateTime()),
        sa.Column("claim_token", sa.String(32)),
        sa.Column("occurrence_key", sa.String(255)),
        sa.Column("last_error", sa.String(2000)),
        _now_column("created_at"),
        sa.Column("finished_at", UTCDateTime()),
        # Set for a schedule's job with .expires(): not started by then, it ends "expired".
        sa.Column("expires_at", UTCDateTime()),
        # When the last attempt started (written with its outcome): the run's duration.
        sa.Column("started_at", UTCDateTime()),
        # The schedule that dispatched it (its overlap policy looks at its own jobs).
        sa.Column("schedule", sa.String(191)),
        sa.UniqueConstraint("occurrence_key", name=f"{prefix}uq_indexnow_jobs_occurrence"),
        # The claim's ORDER BY must be served by an index: otherwise MySQL/MariaDB
        # sort the due rows and lock every one of them, and concurrent workers'
        # SKIP LOCKED claims find nothing while one claim is open.
        sa.Index(f"{prefix}ix_indexnow_jobs_claim", "status", "available_at", "id"),
        sa.Index(f"{prefix}ix_indexnow_jobs_queue_claim", "status", "queue", "available_at", "id"),
        sa.Index(f"{prefix}ix_indexnow_jobs_handler", "handler", "status"),
        sa.Index(f"{prefix}ix_indexnow_jobs_stale", "status", "claimed_at"),
        sa.Index(f"{prefix}ix_indexnow_jobs_finished", "finished_at"),
        sa.Index(f"{prefix}ix_indexnow_jobs_expiry", "status", "expires_at"),
        sa.Index(f"{prefix}ix_indexnow_jobs_schedule", "schedule", "status"),
    )


def url_state_table(metadata: sa.MetaData, prefix: str = "") -> sa.Table:
    """What was last delivered for a URL: the ledger behind fingerprints and resubmit intervals."""
    return sa.Table(
        f"{prefix}indexnow_urls",
        metadata,
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("url", sa.String(2048), nullable=False),
        sa.Column("url_hash", sa.String(64), nullable=False),
        sa.Column("fingerprint", sa.String(128)),
        sa.Column("last_success_at", UTCDateTime()),
        # INDEXNOW_VERIFY (verify/): the last verdict ("<reason>: <detail>") and when it
        # was made; when a delete was last delivered (None: what engines last got was
        # an update), so a page that stops being indexable is withdrawn once.
        sa.Column("verdict", sa.String(1000)),
        sa.Column("verified_at", UTCDateTime()),
        sa.Column("withdrawn_at", UTCDateTime()),
        # When the extension last saw a real change of the URL (an ``update`` event): the
        # sitemap's lastmod. Written by the pass, never in the host's transaction (sitemap/changes.py).
        sa.Column("changed_at", UTCDateTime()),
        sa.UniqueConstraint("url_hash", "host", name=f"{prefix}uq_indexnow_urls_url"),
    )


# -- metrics (issue 22) ---------------------------------------------------------------------------


def totals_table(metadata: sa.MetaData, prefix: str = "") -> sa.Table:
    """Deliveries ever recorded, per engine and history status: the counters that pruning never lowers.

    One row per (engine, status), added to in the transaction that writes the
    outcome (see :mod:`flask_indexnow.totals`); ``last_at`` is when
    the counter last moved.
    """
    return sa.Table(
        f"{prefix}indexnow_totals",
        metadata,
        # The endpoint URL, as in the history's ``engine`` column.
        sa.Column("engine", sa.String(255), primary_key=True),
        sa.Column("status", sa.String(12), primary_key=True),
        sa.Column("count", sa.BigInteger, nullable=False, default=0),
        sa.Column("last_at", UTCDateTime(), nullable=False),
    )


def schedule_run_table(metadata: sa.MetaData, prefix: str = "") -> sa.Table:
    """One occurrence of a schedule and what became of it: the schedule's history."""
    return sa.Table(
        f"{prefix}indexnow_schedule_runs",
        metadata,
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("schedule", sa.String(191), nullable=False),
        # dispatched, skipped, missed, triggered, expired
        sa.Column("outcome", sa.String(12), nullable=False),
        sa.Column("due_at", UTCDateTime(), nullable=False),
        # The job it made (no foreign key: finished jobs are pruned on their own).
        sa.Column("job_id", sa.BigInteger),
        _now_column("created_at"),
        sa.Index(f"{prefix}ix_indexnow_schedule_runs_schedule", "schedule", "id"),
        sa.Index(f"{prefix}ix_indexnow_schedule_runs_job", "job_id"),
        sa.Index(f"{prefix}ix_indexnow_schedule_runs_created", "created_at"),
    )


def inbox_table(metadata: sa.MetaData, prefix: str = "") -> sa.Table:
    """Events written inside the site's own transactions, waiting for a pass to merge them into the queue.

    Insert-only from the site's side, with no key but its id and no index
    beyond it: a save inserts a row no pass has locked, updates or deletes,
    so it never waits for, deadlocks with or fails a serialization check
    against delivery (issue 18). Each pass merges the rows, in id order, and
    deletes them in the same transaction (see inbox.py).
    """
    return sa.Table(
        f"{prefix}indexnow_inbox",
        metadata,
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("url", sa.String(2048), nullable=False),
        sa.Column("action", sa.String(10), nullable=False),
        sa.Column("available_at", UTCDateTime(), nullable=False),
        sa.Column("fingerprint", sa.String(128)),
        _now_column("created_at"),
    )
