"""Declared schedules stay in step with the code: ``scheduler.sync()``.

``indexnow.schedule(...).every(...).declare()`` records a schedule on the
extension, with no app context (at import time). ``sync()`` — run by
``flask indexnow work`` when it starts and by ``flask indexnow schedule
sync`` — upserts each one (origin ``declared``), and a schedule an earlier
sync created that is no longer declared is paused and marked ``undeclared``:
kept, with its history, and enabled again if it is declared again. Deleting
a schedule from the code therefore stops it, which Celery beat's database
schedulers do not do.

Schedules saved by hand (``save()``, ``schedule add``) and the built-in ones
are never touched: a declaration with the same name is reported as a
conflict and left out. A declared schedule an operator paused stays paused.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from ..state import IndexNowState
from .schedules import DECLARED, ScheduleInfo, fill_names, upsert_schedule

logger = logging.getLogger(__name__)


@dataclass
class SyncResult:
    """What one sync did, by schedule name."""

    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    redeclared: list[str] = field(default_factory=list)
    undeclared: list[str] = field(default_factory=list)
    #: Declared names already taken by a schedule saved by hand (or a built-in): left alone.
    conflicts: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        parts = [f"{len(self.created)} created", f"{len(self.updated)} up to date or updated"]
        if self.redeclared:
            parts.append(f"{len(self.redeclared)} declared again (resumed): {', '.join(self.redeclared)}")
        if self.undeclared:
            parts.append(f"{len(self.undeclared)} no longer declared (paused): {', '.join(self.undeclared)}")
        if self.conflicts:
            parts.append(f"{len(self.conflicts)} not synced, the name belongs to a schedule saved by hand: "
                         + ", ".join(self.conflicts))
        return "; ".join(parts)


def sync(state: IndexNowState) -> SyncResult:
    """See the module docs."""
    declared = dict(state.extension.declared_schedules)
    table = state.models.schedule
    result = SyncResult()
    with state.engine().begin() as connection:
        fill_names(connection, table)
    for name, spec in declared.items():
        verdict: list[str] = []

        def decide(current: Any, verdict: list[str] = verdict) -> dict[str, Any] | None:
            verdict.clear()
            if current is None:
                verdict.append("created")
                return {"origin": DECLARED, "undeclared": False, "enabled": True}
            if ScheduleInfo.from_row(current).origin != DECLARED:
                verdict.append("conflict")
                return None
            if current.undeclared:
                verdict.append("redeclared")
                return {"undeclared": False, "enabled": True, "_fresh": True}
            verdict.append("updated")
            return {}  # timing kept when unchanged; paused stays paused

        upsert_schedule(state, spec, decide)
        {"created": result.created, "updated": result.updated, "redeclared": result.redeclared,
         "conflict": result.conflicts}[verdict[0]].append(name)
    gone = sa.and_(table.c.origin == DECLARED, table.c.undeclared.is_(False), table.c.name.not_in(list(declared)))
    with state.engine().begin() as connection:
        result.undeclared = sorted(connection.execute(sa.select(table.c.name).where(gone)).scalars())
        if result.undeclared:
            connection.execute(sa.update(table).where(gone, table.c.name.in_(result.undeclared))
                               .values(enabled=False, undeclared=True))
    if result.undeclared:
        logger.warning("IndexNow: schedule(s) no longer declared, paused: %s", ", ".join(result.undeclared))
    if result.conflicts:
        logger.warning("IndexNow: declared schedule(s) %s not synced: a schedule saved by hand has the name",
                       ", ".join(result.conflicts))
    return result
