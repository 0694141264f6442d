"""403 streaks: when an engine keeps refusing a host's key, say so once and loudly.

A 403 means the engine could not verify the key file. One 403 may be a
passing hiccup of a CDN; INDEXNOW_FORBIDDEN_ESCALATION of them in a row for
one host are not, and every URL of that host is being thrown away meanwhile.
The streak is counted in the cache, shared by every process that uses it, like
the endpoint pause: an atomic ``INCR`` on Redis, a read-and-write elsewhere.
Exactly one CRITICAL line per streak comes from an atomic ``add`` of a marker,
so two workers that see the threshold together still log it once. A
delivery the engine accepts (any 2xx) ends the streak and removes the marker;
other answers (429, 5xx, timeouts, and a 403 that only says the engine has
not finished verifying the key: :mod:`flask_indexnow.refusal`) say nothing about the key and leave it.

A cache that fails is passed over (the breaker reports it once): escalation is advice, and must
never stop a delivery.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any, Protocol

from cachelib import RedisCache

from ..breaker import CacheUnavailable
from ..state import Engine, IndexNowState

logger = logging.getLogger(__name__)

#: Seconds a streak (and its marker) is remembered after its last 403 where
#: the cache needs a lifetime (Redis keeps the count until a success).
STREAK_TTL = 30 * 86_400
_KEY = "indexnow_forbidden:"
_local = threading.Lock()


class Answered(Protocol):
    """What a streak reads of an engine's answer (``delivery.endpoint.Answer``; keys sit below delivery)."""

    @property
    def http_status(self) -> int | None: ...

    @property
    def outcome(self) -> str: ...


@dataclass(frozen=True)
class Streak:
    """A host's run of 403 answers: how long, and whether it was escalated."""

    count: int
    escalated: bool


def _key(state: IndexNowState, engine: Engine, host: str) -> str:
    """Per engine and host: another engine (or a new endpoint) starts its own count."""
    return state.cache_key(f"{_KEY}{engine.digest}:{host}")


def _marker(key: str) -> str:
    return key + ":escalated"


def note_answer(state: IndexNowState, engine: Engine, host: str, answer: Answered) -> int | None:
    """Count a 403 toward ``host``'s streak and return its length; end the streak on a 2xx.

    Returns None for every answer but a 403 (and when the cache failed).
    """
    if state.settings.forbidden_escalation <= 0:
        return None
    key = _key(state, engine, host)
    breaker = state.cache_breaker  # a failing cache is reported once, by the breaker
    try:
        if answer.http_status == 403 and answer.outcome == "failed":  # "not verified yet" is no refusal of the key
            return breaker.call("counting a 403 streak", _bump, state.cache, key)
        if answer.outcome == "success" and answer.http_status is not None:
            breaker.call("ending a 403 streak", state.cache.delete_many, key, _marker(key))
    except CacheUnavailable:
        pass
    return None


def _bump(cache: Any, key: str) -> int:
    backend = _backend(cache)
    if backend is not None and _atomic_inc(backend):
        count = backend.inc(key)
        if count is not None:
            return int(count)
    with _local:  # in one process at least, two threads never lose a count
        count = int(cache.get(key) or 0) + 1
        cache.set(key, count, timeout=STREAK_TTL)
    return count


def _backend(cache: Any) -> Any:
    """The cachelib backend of a Flask-Caching ``Cache`` (None outside an app context)."""
    try:
        return cache.cache
    except Exception:
        return None


def _atomic_inc(backend: Any) -> bool:
    """Redis (and its sentinel and cluster forms) increment atomically and keep the count without a TTL."""
    return isinstance(backend, RedisCache)


def escalate(state: IndexNowState, engine: Engine, host: str, count: int) -> bool:
    """True for the one caller that should log this streak's CRITICAL line."""
    threshold = state.settings.forbidden_escalation
    if threshold <= 0 or count < threshold:
        return False
    try:
        return bool(state.cache_breaker.call("marking a 403 streak", state.cache.add, _marker(_key(state, engine, host)),
                                             count, timeout=STREAK_TTL))
    except CacheUnavailable:
        return count == threshold  # without the cache, each process logs the streak when it reaches the threshold


def streaks(state: IndexNowState, engine: Engine, hosts: list[str]) -> dict[str, Streak]:
    """``engine``'s current streak of each of ``hosts`` that has one (one cache read for all)."""
    if not hosts or state.settings.forbidden_escalation <= 0:
        return {}
    keys = [_key(state, engine, host) for host in hosts]
    try:
        values = state.cache_breaker.call("reading the 403 streaks", state.cache.get_many,
                                          *[k for key in keys for k in (key, _marker(key))])
    except CacheUnavailable:
        return {}
    found = {}
    for index, host in enumerate(hosts):
        count, marker = values[2 * index], values[2 * index + 1]
        try:
            number = int(count or 0)
        except (TypeError, ValueError):
            continue
        if number > 0:
            found[host] = Streak(number, marker is not None)
    return found
