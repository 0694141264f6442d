"""A best-effort cross-process lock on a flask-caching backend.

``cache.add`` is atomic on Redis and Memcached, so only one process wins. The
value also carries its own expiry, because some backends (and some cachelib
versions) ignore the TTL passed to ``add``: a lock left behind by a crashed
process is taken over once that expiry is past. Correctness never rests on
this lock (the database claim is atomic); it only keeps parallel requests from
running duplicate ticks.
"""

from __future__ import annotations

import secrets
from typing import Any

from . import clock


class CacheLock:
    """``with CacheLock(cache, name, ttl) as held: if held: ...``"""

    def __init__(self, cache: Any, name: str, ttl: int) -> None:
        self.cache = cache
        self.name = name
        self.ttl = ttl
        self.token = secrets.token_hex(8)
        self.held = False

    def _value(self) -> str:
        return f"{self.token}:{clock.utcnow().timestamp() + self.ttl:.3f}"

    def acquire(self) -> bool:
        """Take the lock if it is free or expired; return whether we hold it."""
        if self.cache.add(self.name, self._value(), timeout=self.ttl):
            self.held = True
            return True
        current = self.cache.get(self.name)
        if current is None or _expired(current):
            # Free (it vanished) or abandoned: take it over, then make sure we won.
            self.cache.delete(self.name)
            if self.cache.add(self.name, self._value(), timeout=self.ttl):
                self.held = True
        return self.held

    def release(self) -> None:
        """Give the lock back, unless it has expired and someone else took it."""
        if self.held:
            current = self.cache.get(self.name)
            if isinstance(current, str) and current.startswith(self.token + ":"):
                self.cache.delete(self.name)
            self.held = False

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def _expired(value: Any) -> bool:
    try:
        expires_at = float(str(value).rsplit(":", 1)[1])
    except (IndexError, ValueError):
        return True  # not ours or unreadable: treat as abandoned
    return expires_at <= clock.utcnow().timestamp()
