"""A request budget per engine: INDEXNOW_REQUESTS_PER_MINUTE POSTs at most, shared by every process.

Time is cut into fixed one-minute windows (of the extension's clock). Each
POST to an engine first takes one unit of that engine's count for the current
window: an atomic increment in the cache (Redis ``INCR`` on a key that expires
after two windows), so every worker and web process that shares the cache
shares the budget. A batch that finds the budget spent is not sent: the pass
gives its rows back without spending an attempt, due when the next window
opens.

A cache that fails (or is left alone by the breaker, see breaker.py) is passed
over: the count falls back to this process's own, so each process keeps the
budget by itself until the cache answers again. That may let several
processes together exceed the budget for a while; it never stops delivery.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from cachelib import RedisCache

from .. import clock
from ..breaker import CacheUnavailable
from ..state import Engine, IndexNowState

#: Seconds of one budget window.
WINDOW = 60
_KEY = "indexnow_budget:"
_local_lock = threading.Lock()


@dataclass(frozen=True)
class Usage:
    """One engine's budget in the current window."""

    engine: str
    used: int
    limit: int
    window_ends: datetime

    def as_dict(self) -> dict[str, Any]:
        return {"used": self.used, "limit": self.limit, "window_ends": self.window_ends.isoformat()}


def _window(now: float | None = None) -> int:
    return int((clock.utcnow().timestamp() if now is None else now) // WINDOW)


def window_end(window: int) -> datetime:
    return datetime.fromtimestamp((window + 1) * WINDOW, tz=timezone.utc)


def _key(state: IndexNowState, engine: Engine, window: int) -> str:
    return state.cache_key(f"{_KEY}{engine.digest}:{window}")


def _current(state: IndexNowState, engine: Engine) -> tuple[int, int, str] | None:
    """The limit, the current window and its cache key for ``engine``; None without a budget."""
    limit = state.settings.requests_per_minute
    if limit is None:
        return None
    window = _window()
    return limit, window, _key(state, engine, window)


def take(state: IndexNowState, engine: Engine) -> datetime | None:
    """Spend one POST of ``engine``'s budget: None when it may be sent now, else when the next window opens."""
    current = _current(state, engine)
    if current is None:
        return None
    limit, window, key = current
    try:
        count = _increment(state, key)
    except CacheUnavailable:
        count = _local_increment(engine, key, window)
    if count > limit:
        return window_end(window)
    return None


def _increment(state: IndexNowState, key: str) -> int:
    """Add one to the window's count in the cache, atomically where the cache can (Redis INCR)."""
    guarded = state.guarded_cache
    backend = getattr(state.cache, "cache", state.cache)
    if isinstance(backend, RedisCache) and getattr(backend, "_write_client", None) is not None:
        return int(guarded.breaker.call(f"counting {key}", _redis_increment, backend, key, 2 * WINDOW))
    guarded.add(key, 0, timeout=2 * WINDOW)  # creates the key with its expiry; INCR keeps it
    inc = getattr(backend, "inc", None)
    if inc is None:
        raise CacheUnavailable("the cache cannot count")
    count = guarded.breaker.call(f"counting {key}", inc, key)
    if count is None:
        raise CacheUnavailable("the cache did not count")
    return int(count)


def _redis_increment(backend: RedisCache, key: str, ttl: int) -> int:
    """``INCR`` and ``EXPIRE`` in one transaction on the Redis client: one round trip, no serializer.

    cachelib before 0.16 (the newest on Python 3.10 is 0.14) pickles the 0 that
    ``add()`` would write first, which ``INCR`` then refuses ("value is not an
    integer"); the count is written by Redis itself here, which every cachelib reads.
    """
    prefix = backend.key_prefix() if callable(backend.key_prefix) else (backend.key_prefix or "")
    name = prefix + key
    pipe = backend._write_client.pipeline()
    pipe.incr(name)
    pipe.expire(name, ttl)
    count, _ = pipe.execute()
    return int(count)


def _local_increment(engine: Engine, key: str, window: int) -> int:
    """This process's own count for ``engine``, while the cache is unavailable."""
    with _local_lock:
        counts = engine.local_request_counts
        for old in [k for k, (w, _) in counts.items() if w < window]:
            del counts[old]
        count = counts.get(key, (window, 0))[1] + 1
        counts[key] = (window, count)
        return count


def usage(state: IndexNowState, engine: Engine) -> Usage | None:
    """``engine``'s budget in the current window (None without a budget); the cache is only read."""
    current = _current(state, engine)
    if current is None:
        return None
    limit, window, key = current
    try:
        value = state.guarded_cache.get(key)
    except CacheUnavailable:
        value = None
    if value is None:
        value = engine.local_request_counts.get(key, (window, 0))[1]
    try:
        used = int(value)
    except (TypeError, ValueError):
        used = 0
    return Usage(engine.endpoint, min(used, limit), limit, window_end(window))
