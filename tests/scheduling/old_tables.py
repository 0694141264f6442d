"""The schedules and jobs tables as they were before issue 21 (named schedules), for the upgrade tests.

Copied from flask_indexnow/tables.py as released: an existing database has
exactly these, created by ``init-db`` or an earlier migration.
"""

from __future__ import annotations

import sqlalchemy as sa

from flask_indexnow.tables import UTCDateTime, _now_column

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def schedule_table(metadata: sa.MetaData, prefix: str = "") -> sa.Table:
    """A recurring job: when it next runs and what it dispatches."""
    return sa.Table(
        f"{prefix}indexnow_schedules",
        metadata,
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("handler", sa.String(191), nullable=False, unique=True),
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
        sa.Column("enabled", sa.Boolean, nullable=False, default=True),
        _now_column("created_at"),
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
        sa.UniqueConstraint("occurrence_key", name=f"{prefix}uq_indexnow_jobs_occurrence"),
        # The claim's ORDER BY must be served by an index: otherwise MySQL/MariaDB
        # sort the due rows and lock every one of them, and concurrent workers'
        # SKIP LOCKED claims find nothing while one claim is open.
        sa.Index(f"{prefix}ix_indexnow_jobs_claim", "status", "available_at", "id"),
        sa.Index(f"{prefix}ix_indexnow_jobs_queue_claim", "status", "queue", "available_at", "id"),
        sa.Index(f"{prefix}ix_indexnow_jobs_handler", "handler", "status"),
        sa.Index(f"{prefix}ix_indexnow_jobs_stale", "status", "claimed_at"),
        sa.Index(f"{prefix}ix_indexnow_jobs_finished", "finished_at"),
    )
