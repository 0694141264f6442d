"""The cached "next due" time that lets an idle site skip the database.

The tick reads it before anything else: when the earliest pending row is known
to be in the future, there is nothing to do and no query is made. Enqueueing
lowers it; a pass sets it from the queue. Entries live at most
:data:`MAX_AGE` seconds, so a row written by another process whose cache is not
shared (SimpleCache) is still picked up within that time.

Each process also keeps what it last learnt in memory (``state.idle_until``,
trusted for :data:`LOCAL_MAX_AGE` seconds at most), so the requests of an
idle site do not schedule a tick at all: no cache read on any request path.
An enqueue in this process forgets it at once; one in another process is
seen within :data:`LOCAL_MAX_AGE`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa

from . import clock
from .state import IndexNowState, logger

MAX_AGE = 60
#: Seconds a process trusts its in-memory copy of the next-due time.
LOCAL_MAX_AGE = 5.0
_KEY = "indexnow_next_due"


def known_idle(state: IndexNowState) -> bool:
    """True when this process learnt recently that no row can be due now (memory only)."""
    return state.idle_until > clock.utcnow().timestamp()


def is_idle(state: IndexNowState) -> bool:
    """True when the cache says no row can be due now (no database query)."""
    value = state.cache.get(state.cache_key(_KEY))
    idle = value is not None and float(value) > clock.utcnow().timestamp()
    if idle:
        _remember(state, float(value))
    return idle


def _remember(state: IndexNowState, stamp: float) -> None:
    state.idle_until = min(stamp, clock.utcnow().timestamp() + LOCAL_MAX_AGE)


def lower(state: IndexNowState, when: datetime) -> None:
    """Record that a row becomes due at ``when`` (earlier entries win)."""
    state.idle_until = 0.0
    try:
        key = state.cache_key(_KEY)
        current = state.cache.get(key)
        stamp = clock.as_utc(when).timestamp()
        if current is None or stamp < float(current):
            state.cache.set(key, stamp, timeout=_ttl(stamp))
    except Exception:  # a cache outage must never break a save
        logger.warning("IndexNow: could not update the cached next-due time", exc_info=True)


def refresh(state: IndexNowState, connection: Any) -> None:
    """Set the cached next-due time from the queue's earliest pending row."""
    queue = state.models.Queue.__table__
    earliest = connection.execute(
        sa.select(sa.func.min(queue.c.available_at)).where(queue.c.status == sa.literal_column("'pending'"))  # literal: the partial index applies
    ).scalar()
    now = clock.utcnow().timestamp()
    stamp = now + MAX_AGE if earliest is None else clock.as_utc(earliest).timestamp()
    _remember(state, stamp)  # first: with the cache down, this process still stops querying for a while
    state.cache.set(state.cache_key(_KEY), stamp, timeout=_ttl(stamp))


def forget(state: IndexNowState) -> None:
    state.idle_until = 0.0
    state.cache.delete(state.cache_key(_KEY))


def _ttl(stamp: float) -> int:
    return int(max(1, min(MAX_AGE, stamp - clock.utcnow().timestamp() + 1)))
