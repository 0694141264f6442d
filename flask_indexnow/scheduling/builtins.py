"""The built-in job handlers and their schedules.

=========================  ==============  ===================================
handler                    default         what it does
=========================  ==============  ===================================
``indexnow.process_queue`` every 1 minute  a worker pass (the backup cron)
``indexnow.prune_history`` every 1 day     deletes history older than
                                           INDEXNOW_HISTORY_RETENTION_DAYS
=========================  ==============  ===================================

Both use the SKIP overlap policy and the ``default`` queue, and first come
due one interval after they are created. They are created when missing,
never changed: ``flask indexnow schedule add indexnow.process_queue
--every "5 minutes"`` sticks.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa

from .. import clock
from ..delivery.worker import process_queue
from ..missing import is_missing_table
from ..state import IndexNowState, get_state
from .intervals import parse_interval
from .prune import prune_history
from .schedules import BUILTIN, PROCESS_QUEUE, PRUNE_HISTORY, OverlapPolicy, fill_names

logger = logging.getLogger(__name__)

#: How long a process trusts that the built-in schedules exist before looking again.
RECHECK_SECONDS = 3600.0


def _process_queue(payload: Any) -> None:
    limit = payload.get("limit") if isinstance(payload, dict) else None
    process_queue(get_state(), limit)


def _prune_history(payload: Any) -> None:
    days = payload.get("days") if isinstance(payload, dict) else None
    prune_history(get_state(), days)


BUILTIN_HANDLERS: dict[str, Callable[[Any], Any]] = {
    PROCESS_QUEUE: _process_queue,
    PRUNE_HISTORY: _prune_history,
}
#: handler → default interval.
BUILTIN_INTERVALS = {PROCESS_QUEUE: "1 minute", PRUNE_HISTORY: "1 day"}


def ensure_builtin_schedules(state: IndexNowState) -> None:
    """Create the built-in schedules that are missing.

    Cheap enough for every tick: after one look at the table a process
    trusts the answer for :data:`RECHECK_SECONDS`. Never raises: a database
    problem is logged and looked at again next time.
    """
    checked = state.scheduler.builtins_checked_at
    if checked is not None and time.monotonic() - checked < RECHECK_SECONDS:
        return
    try:
        create_missing(state)
    except Exception as exc:
        if is_missing_table(exc):  # the caller's next query meets it too and reports it, in one line
            return
        logger.warning("IndexNow: could not make sure the built-in schedules exist", exc_info=True)
        return
    state.scheduler.builtins_checked_at = time.monotonic()


def create_missing(state: IndexNowState) -> list[str]:
    """Insert the built-in schedules not in the table yet; return their names (their handlers).

    Rows from before schedules had names get theirs first (a cheap UPDATE
    that finds nothing once done): this runs in every worker, about hourly.
    """
    table = state.models.schedule
    wanted = dict(BUILTIN_INTERVALS)
    if state.settings.history_retention_days is None:
        wanted.pop(PRUNE_HISTORY)
    created: list[str] = []
    engine = state.engine()
    with engine.begin() as connection:
        fill_names(connection, table)
    with engine.connect() as connection:
        existing = set(connection.execute(
            sa.select(table.c.name).where(table.c.name.in_(list(wanted)))
        ).scalars())
    for handler, expression in wanted.items():
        if handler in existing:
            continue
        now = clock.utcnow()
        try:
            with engine.begin() as connection:
                connection.execute(sa.insert(table).values(
                    name=handler, origin=BUILTIN, handler=handler, payload=None, queue="default", kind="interval", expression=expression,
                    timezone="UTC", overlap=OverlapPolicy.SKIP.value, anchor=now,
                    next_run=parse_interval(expression).first_after(now, now), enabled=True, created_at=now,
                ))
            created.append(handler)
        except sa.exc.IntegrityError:
            pass  # another process created it first
    if created:
        logger.info("IndexNow: created the built-in schedule(s) %s", ", ".join(created))
    return created
