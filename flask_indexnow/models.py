"""The ORM classes of the extension's tables, mapped on the application's own ``db.Model``.

The library itself works on the typed tables of :mod:`flask_indexnow.tables`;
the classes are for the app's own queries (``indexnow.models.Queue`` …), typed
by the row shapes below. They are built by :func:`get_models` once per
``(db, prefix)`` and cached, so several apps (or test apps) can share one
``db`` without "Table already defined" errors.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar, TypeAlias, TypeVar

import sqlalchemy as sa
from sqlalchemy.orm import Mapped

from .tables import Tables, build_tables


def url_hash(url: str) -> str:
    """The fixed-width key that makes (host, url) unique on every database.

    URLs may be 2,048 characters, longer than MySQL can index; their SHA-256 can.
    """
    return hashlib.sha256(url.encode("utf-8")).hexdigest()


# -- the row shapes: what each ORM class has, for type checkers and readers ----------------------


#: What a JSON column holds (None is SQL NULL or JSON null).
JSONValue: TypeAlias = dict[str, Any] | list[Any] | str | int | float | bool


class _Row:
    """What every mapped class has besides its columns (``db.Model`` gives it at run time)."""

    __table__: ClassVar[sa.Table]


class QueueRow(_Row):
    """A URL waiting to be submitted: one row per (host, url, engine)."""

    id: Mapped[int]
    host: Mapped[str]
    url: Mapped[str]
    url_hash: Mapped[str]
    engine: Mapped[str]
    action: Mapped[str]
    status: Mapped[str]
    attempts: Mapped[int]
    available_at: Mapped[datetime]
    claimed_at: Mapped[datetime | None]
    claim_token: Mapped[str | None]
    fingerprint: Mapped[str | None]
    last_error: Mapped[str | None]
    last_http_status: Mapped[int | None]
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]


class HistoryRow(_Row):
    """One delivery attempt of one URL and how it ended."""

    id: Mapped[int]
    host: Mapped[str]
    url: Mapped[str]
    action: Mapped[str]
    status: Mapped[str]
    http_status: Mapped[int | None]
    error: Mapped[str | None]
    attempts: Mapped[int]
    created_at: Mapped[datetime]
    engine: Mapped[str | None]


class ScheduleRow(_Row):
    """A recurring job: when it next runs and what it dispatches."""

    id: Mapped[int]
    handler: Mapped[str]
    payload: Mapped[JSONValue | None]
    queue: Mapped[str]
    kind: Mapped[str]
    expression: Mapped[str]
    timezone: Mapped[str]
    overlap: Mapped[str]
    next_run: Mapped[datetime]
    last_run: Mapped[datetime | None]
    anchor: Mapped[datetime | None]
    enabled: Mapped[bool]
    created_at: Mapped[datetime]
    name: Mapped[str | None]
    origin: Mapped[str]
    undeclared: Mapped[bool]
    misfire_grace: Mapped[str | None]
    expires: Mapped[str | None]
    max_attempts: Mapped[int | None]


class JobRow(_Row):
    """One run of a handler, with its own attempts and retry."""

    id: Mapped[int]
    handler: Mapped[str]
    queue: Mapped[str]
    payload: Mapped[JSONValue | None]
    status: Mapped[str]
    attempts: Mapped[int]
    max_attempts: Mapped[int]
    available_at: Mapped[datetime]
    claimed_at: Mapped[datetime | None]
    claim_token: Mapped[str | None]
    occurrence_key: Mapped[str | None]
    last_error: Mapped[str | None]
    created_at: Mapped[datetime]
    finished_at: Mapped[datetime | None]
    expires_at: Mapped[datetime | None]
    started_at: Mapped[datetime | None]
    schedule: Mapped[str | None]


class URLStateRow(_Row):
    """What was last delivered for a URL: the ledger behind fingerprints and resubmit intervals."""

    id: Mapped[int]
    host: Mapped[str]
    url: Mapped[str]
    url_hash: Mapped[str]
    fingerprint: Mapped[str | None]
    last_success_at: Mapped[datetime | None]
    verdict: Mapped[str | None]
    verified_at: Mapped[datetime | None]
    withdrawn_at: Mapped[datetime | None]
    #: When an ``update`` of the URL was last seen (the sitemap's lastmod).
    changed_at: Mapped[datetime | None]


class TotalRow(_Row):
    """Deliveries ever recorded for one engine and history status (never lowered by pruning)."""

    engine: Mapped[str]
    status: Mapped[str]
    count: Mapped[int]
    last_at: Mapped[datetime]


class ScheduleRunRow(_Row):
    """One occurrence of a schedule and its outcome."""

    id: Mapped[int]
    schedule: Mapped[str]
    outcome: Mapped[str]
    due_at: Mapped[datetime]
    job_id: Mapped[int | None]
    created_at: Mapped[datetime]


class InboxRow(_Row):
    """An event saved inside the site's transaction, not merged into the queue yet."""

    id: Mapped[int]
    host: Mapped[str]
    url: Mapped[str]
    action: Mapped[str]
    available_at: Mapped[datetime]
    fingerprint: Mapped[str | None]
    created_at: Mapped[datetime]


@dataclass(frozen=True)
class Models:
    """The tables of one ``(db, prefix)`` (``queue`` …), and their ORM classes (``Queue`` …)."""

    Queue: type[QueueRow]
    History: type[HistoryRow]
    Schedule: type[ScheduleRow]
    Job: type[JobRow]
    URLState: type[URLStateRow]
    Totals: type[TotalRow]
    ScheduleRun: type[ScheduleRunRow]
    Inbox: type[InboxRow]
    queue: sa.Table
    history: sa.Table
    schedule: sa.Table
    job: sa.Table
    url_state: sa.Table
    totals: sa.Table
    schedule_run: sa.Table
    inbox: sa.Table

    @property
    def tables(self) -> list[sa.Table]:
        return [self.queue, self.history, self.schedule, self.job, self.url_state, self.totals, self.schedule_run,
                self.inbox]


_registry: dict[tuple[int, str], Models] = {}
_registry_lock = threading.Lock()


def get_models(db: Any, prefix: str = "") -> Models:
    """Return the tables and ORM classes for ``db`` and table ``prefix``, building them once."""
    key = (id(db), prefix)
    with _registry_lock:
        models = _registry.get(key)
        if models is None or models.queue.metadata is not db.metadata:
            models = _registry[key] = _build(db, prefix)
        return models


Row = TypeVar("Row")


def _mapped(db: Any, shape: type[Row], name: str, table: sa.Table, suffix: str) -> type[Row]:
    """``shape`` mapped onto ``table`` as a class of the app's ``db.Model``.

    The class is made by ``db.Model``'s own metaclass, as a ``class``
    statement would, because its name must be chosen at run time: one table
    prefix, one class name (``IndexNowQueueStaging`` …), so the declarative
    registry that several prefixes share keeps them apart.
    """
    namespace = {"__table__": table, "__tablename__": table.name, "__doc__": shape.__doc__, "__module__": __name__}
    mapped: type[Row] = type(db.Model)(f"{name}{suffix}", (shape, db.Model), namespace)
    return mapped


def _build(db: Any, prefix: str) -> Models:
    tables: Tables = build_tables(db.metadata, prefix)
    suffix = "".join(part.capitalize() for part in prefix.split("_")) if prefix else ""
    return Models(
        Queue=_mapped(db, QueueRow, "IndexNowQueue", tables.queue, suffix),
        History=_mapped(db, HistoryRow, "IndexNowHistory", tables.history, suffix),
        Schedule=_mapped(db, ScheduleRow, "IndexNowSchedule", tables.schedule, suffix),
        Job=_mapped(db, JobRow, "IndexNowJob", tables.job, suffix),
        URLState=_mapped(db, URLStateRow, "IndexNowURL", tables.url_state, suffix),
        Totals=_mapped(db, TotalRow, "IndexNowTotals", tables.totals, suffix),
        ScheduleRun=_mapped(db, ScheduleRunRow, "IndexNowScheduleRun", tables.schedule_run, suffix),
        Inbox=_mapped(db, InboxRow, "IndexNowInbox", tables.inbox, suffix),
        **tables._asdict(),
    )
