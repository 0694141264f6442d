"""The rows the status page lists: filtered history, failed rows, schedules, jobs.

Counts live in :mod:`flask_indexnow.stats` (shared with ``status.json`` and the
CLI); this module only pages through rows. Filter values come straight from
the query string, so they are cleaned here: unknown choices are dropped,
numbers clamped, text stripped of control characters and cut to length. A
bogus parameter gives a normal page, never an error.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import sqlalchemy as sa

from ..queue import ACTIONS
from ..state import IndexNowState
from ..stats import HISTORY_STATUSES

PER_PAGE_DEFAULT = 50
PER_PAGE_MAX = 200
#: Pages beyond this are not asked for (an offset that large is a scan).
PAGE_MAX = 100_000
SEARCH_MAX = 200
HOST_MAX = 255
FAILED_LIMIT = 50
SCHEDULES_LIMIT = 100
JOBS_LIMIT = 20


def clean_text(value: Any, limit: int) -> str | None:
    """Printable text of at most ``limit`` characters, or None when nothing is left."""
    if not isinstance(value, str):
        return None
    text = "".join(ch for ch in value if unicodedata.category(ch) not in ("Cc", "Cf", "Cs"))
    text = text.strip()[:limit].strip()
    return text or None


def clean_int(value: Any, default: int, minimum: int, maximum: int) -> int:
    """``value`` as a whole number clamped to [minimum, maximum]; ``default`` if unreadable."""
    if not isinstance(value, str) or not value.strip().isascii():
        return default
    try:
        number = int(value.strip()[:12])
    except ValueError:
        return default
    return max(minimum, min(number, maximum))


@dataclass(frozen=True)
class HistoryFilter:
    """The history table's filters and page, read leniently from the query string."""

    status: str | None = None
    host: str | None = None
    action: str | None = None
    q: str | None = None
    page: int = 1
    per_page: int = PER_PAGE_DEFAULT

    @classmethod
    def from_args(cls, args: Mapping[str, Any]) -> HistoryFilter:
        status = args.get("status")
        action = args.get("action")
        host = clean_text(args.get("host"), HOST_MAX)
        return cls(
            status=status if status in HISTORY_STATUSES else None,
            host=host.lower().rstrip(".") if host else None,
            action=action if action in ACTIONS else None,
            q=clean_text(args.get("q"), SEARCH_MAX),
            page=clean_int(args.get("page"), 1, 1, PAGE_MAX),
            per_page=clean_int(args.get("per_page"), PER_PAGE_DEFAULT, 10, PER_PAGE_MAX),
        )

    @property
    def active(self) -> bool:
        return any((self.status, self.host, self.action, self.q))

    def args(self, **changes: Any) -> dict[str, Any]:
        """Query-string arguments for a link to this view, with ``changes`` applied."""
        values = {"status": self.status, "host": self.host, "action": self.action, "q": self.q,
                  "page": self.page, "per_page": self.per_page}
        values.update(changes)
        if values["page"] == 1:
            values["page"] = None
        if values["per_page"] == PER_PAGE_DEFAULT:
            values["per_page"] = None
        return {k: v for k, v in values.items() if v is not None}


@dataclass
class Page:
    rows: list[Any]
    total: int
    filter: HistoryFilter
    pages: int = field(init=False)

    def __post_init__(self) -> None:
        self.pages = max(1, math.ceil(self.total / self.filter.per_page))

    @property
    def first_index(self) -> int:
        return 0 if not self.total else (self.filter.page - 1) * self.filter.per_page + 1

    @property
    def last_index(self) -> int:
        return (self.filter.page - 1) * self.filter.per_page + len(self.rows)


def history_page(state: IndexNowState, connection: Any, flt: HistoryFilter) -> Page:
    """One page of history, newest first; a page past the end shows the last one."""
    history = state.models.history
    where = []
    if flt.status:
        where.append(history.c.status == flt.status)
    if flt.host:
        where.append(history.c.host == flt.host)
    if flt.action:
        where.append(history.c.action == flt.action)
    if flt.q:
        where.append(sa.func.lower(history.c.url).contains(flt.q.lower(), autoescape=True))
    total = int(connection.execute(sa.select(sa.func.count()).select_from(history).where(*where)).scalar_one())
    pages = max(1, math.ceil(total / flt.per_page))
    if flt.page > pages:
        flt = replace(flt, page=pages)
    rows = list(connection.execute(
        sa.select(history).where(*where).order_by(history.c.id.desc())
        .limit(flt.per_page).offset((flt.page - 1) * flt.per_page)
    ))
    return Page(rows, total, flt)


def failed_rows(state: IndexNowState, connection: Any, limit: int = FAILED_LIMIT) -> list[Any]:
    """The most recently failed queue rows, with their last error."""
    queue = state.models.queue
    return list(connection.execute(
        sa.select(queue).where(queue.c.status == "failed").order_by(queue.c.updated_at.desc(), queue.c.id.desc())
        .limit(limit)
    ))


def schedules(state: IndexNowState, connection: Any, limit: int = SCHEDULES_LIMIT) -> list[Any]:
    table = state.models.schedule
    return list(connection.execute(sa.select(table).order_by(table.c.next_run, table.c.id).limit(limit)))


def recent_jobs(state: IndexNowState, connection: Any, limit: int = JOBS_LIMIT) -> list[Any]:
    table = state.models.job
    return list(connection.execute(sa.select(table).order_by(table.c.id.desc()).limit(limit)))
