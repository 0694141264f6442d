"""What kind of cache the app has: one every process shares, or one of this process alone.

The configuration checks word it for the owner; a pass reads it to know
whether a pause or a budget in the cache is seen by every process.
"""

from __future__ import annotations

from flask import current_app

from .state import IndexNowState

#: The Flask-Caching backends every process (and machine) reaches: a lock, a pause and a budget hold for all.
LOCK_FIT = frozenset({"RedisCache", "RedisSentinelCache", "RedisClusterCache", "MemcachedCache", "SASLMemcachedCache",
                      "SpreadSASLMemcachedCache", "UWSGICache"})
#: The backends of one process (or one machine's files): fine for a single process.
ONE_PROCESS = frozenset({"SimpleCache", "FileSystemCache"})


def cache_backend_name(state: IndexNowState) -> str:
    """The class name of the app's cache backend, "unknown" when it is not registered on the current app."""
    backend = current_app.extensions.get("cache", {}).get(state.cache)
    return type(backend).__name__ if backend is not None else "unknown"


def cache_is_shared(state: IndexNowState) -> bool:
    """Does the cache reach every process (Redis, Memcached)? A per-process or unknown one shares nothing."""
    return cache_backend_name(state) in LOCK_FIT
