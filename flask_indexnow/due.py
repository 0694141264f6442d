"""The cached "next due" time that lets an idle site skip the database.

The tick reads it before anything else: when the earliest pending row is known
to be in the future, there is nothing to do and no query is made. Enqueueing
lowers it; a pass sets it from the queue. Entries live at most
:data:`MAX_AGE` seconds, so a row written by another process whose cache is not
shared (SimpleCache) is still picked up within that time.

Each process also keeps what it last learnt in memory (``state.due.idle_until``,
trusted for :data:`LOCAL_MAX_AGE` seconds at most), so the requests of an
idle site do not schedule a tick at all: no cache read on any request path.
An enqueue in this process forgets it at once; one in another process is
seen within :data:`LOCAL_MAX_AGE`.

No visitor waits for the cache: a row written during a request only lowers
this process's pending time (``state.due.pending``), published after the
response by the tick (:func:`publish_pending`). Outside requests (the CLI, a
worker) it is published at once. Every cache call goes through the breaker
(breaker.py): with the cache down, this process works from its own memory.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from flask import has_request_context

from . import clock
from .breaker import CacheUnavailable
from .state import IndexNowState

MAX_AGE = 60
#: Seconds a process trusts its in-memory copy of the next-due time.
LOCAL_MAX_AGE = 5.0
_KEY = "indexnow_next_due"


def has_pending(state: IndexNowState) -> bool:
    """Whether this process wrote rows whose due time it has yet to publish to the cache."""
    return state.due.pending is not None


def known_idle(state: IndexNowState) -> bool:
    """True when this process learnt recently that no row can be due now (memory only)."""
    return state.due.pending is None and state.due.idle_until > clock.utcnow().timestamp()


def is_idle(state: IndexNowState) -> bool:
    """True when the cache says no row can be due now (no database query).

    With the cache unavailable, this process's own memory answers instead.
    """
    try:
        value = state.guarded_cache.get(state.cache_key(_KEY))
    except CacheUnavailable:
        return known_idle(state)
    stamp = _stamp(value)
    if stamp is None or stamp <= clock.utcnow().timestamp():
        return False
    remember(state, stamp)
    return True


def remember(state: IndexNowState, stamp: float) -> None:
    """Note in this process's memory that nothing is due before ``stamp`` (trusted for a few seconds)."""
    state.due.idle_until = min(stamp, clock.utcnow().timestamp() + LOCAL_MAX_AGE)


def lower(state: IndexNowState, when: datetime) -> None:
    """Record that a row becomes due at ``when`` (earlier entries win).

    During a request the cache is left alone: the time waits in this process
    until the response has been sent (:func:`publish_pending`).
    """
    state.due.idle_until = 0.0
    stamp = clock.as_utc(when).timestamp()
    if has_request_context():
        _keep_pending(state, stamp)
        return
    _publish(state, stamp)


def publish_pending(state: IndexNowState) -> float | None:
    """Publish the earliest due time written by this process's requests; return it (None: nothing to do).

    Runs after the response (in the tick). When the cache is unavailable the
    time is dropped, not kept for later: the tick that follows reads the
    database anyway, and a time kept pending would make every request tick.
    Other processes learn of the rows within :data:`MAX_AGE` at most.
    """
    with state.lock:
        stamp, state.due.pending = state.due.pending, None
    if stamp is not None:
        _publish(state, stamp)
    return stamp


def _keep_pending(state: IndexNowState, stamp: float) -> None:
    with state.lock:
        state.due.pending = stamp if state.due.pending is None else min(state.due.pending, stamp)


def _publish(state: IndexNowState, stamp: float) -> bool:
    """Lower the cached time to ``stamp``; False when the cache is unavailable."""
    key = state.cache_key(_KEY)
    try:
        current = _stamp(state.guarded_cache.get(key))
        if current is None or stamp < current:
            state.guarded_cache.set(key, stamp, timeout=_ttl(stamp))
    except CacheUnavailable:  # the breaker has logged it; other processes learn within MAX_AGE
        return False
    return True


def next_due(state: IndexNowState, connection: Any) -> float:
    """The earliest due time of a pending row or an inbox event, as a timestamp (now + MAX_AGE when none).

    The inbox counts: what a site's transaction queued there is merged by the
    next pass, which must come (see :mod:`flask_indexnow.inbox`).
    """
    queue, inbox = state.models.queue, state.models.inbox
    queued, waiting = connection.execute(sa.select(
        sa.select(sa.func.min(queue.c.available_at))
        .where(queue.c.status == sa.literal_column("'pending'"))  # literal: the partial index applies
        .scalar_subquery(),
        sa.select(sa.func.min(inbox.c.available_at)).scalar_subquery(),
    )).one()
    found = [clock.as_utc(when) for when in (queued, waiting) if when is not None]
    return clock.utcnow().timestamp() + MAX_AGE if not found else min(found).timestamp()


def store(state: IndexNowState, stamp: float) -> None:
    """Set the next-due time learnt from the queue (call it with no database connection held)."""
    remember(state, stamp)  # first: with the cache down, this process still stops querying for a while
    try:
        state.guarded_cache.set(state.cache_key(_KEY), stamp, timeout=_ttl(stamp))
    except CacheUnavailable:
        pass


def forget(state: IndexNowState) -> None:
    state.due.idle_until = 0.0
    try:
        state.guarded_cache.delete(state.cache_key(_KEY))
    except CacheUnavailable:
        pass


def _stamp(value: Any) -> float | None:
    """A cached time as a number; None when missing or unreadable (a foreign value).

    ``nan`` or ``inf`` would read as "idle for ever": no tick would look at the queue again.
    """
    if value is None or isinstance(value, bool):
        return None
    try:
        stamp = float(value)
    except (TypeError, ValueError):
        return None
    return stamp if math.isfinite(stamp) else None


def _ttl(stamp: float) -> int:
    return int(max(1, min(MAX_AGE, stamp - clock.utcnow().timestamp() + 1)))
