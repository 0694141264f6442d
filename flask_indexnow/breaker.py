"""A circuit breaker in front of the cache: an outage costs one timeout, not one per request.

The cache (Redis, usually) only makes the extension cheaper: it shares the
tick lock, the next-due time and the endpoint pause between processes.
Nothing depends on it for correctness, since the database claim is atomic.
So when a cache call fails, waiting for the cache again on every
request would be the worst choice. A frozen Redis costs a whole socket timeout per
call, and a blog paid 1,081 ms per post for it. After one failure the breaker
*opens*: for :data:`WINDOW` seconds no cache call is made at all and callers
work from the database and from what this process knows. Then one call (a
single probe, whatever the number of threads) tries the cache again: success
closes the breaker, failure opens it for another window.

The breaker is per process and per app (``state.cache_breaker``), and
thread-safe. Its time is the extension's clock, so tests move it rather than
sleep.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from . import clock
from .ratelog import RateLimitedLog

#: Seconds the cache is left alone after a failure.
WINDOW = 30.0
T = TypeVar("T")


class CacheUnavailable(Exception):
    """The cache failed just now, or failed recently and is left alone for a while.

    Callers catch it and go on without the cache; the breaker has already
    logged the failure (once a minute at most), so they log nothing more.
    """


class CacheBreaker:
    """Closed (calls go through), open (no calls) or probing (one call tries the cache again)."""

    def __init__(self, log: RateLimitedLog, window: float = WINDOW) -> None:
        self.log = log
        self.window = window
        self._lock = threading.Lock()
        self._tripped = False
        self._open_until = 0.0
        self._probing = False

    @property
    def is_open(self) -> bool:
        """True while cache calls are refused (a failure less than a window ago, or a probe under way)."""
        if not self._tripped:
            return False
        with self._lock:
            return self._tripped and (self._probing or not self._window_over())

    def _window_over(self) -> bool:
        now = clock.utcnow().timestamp()
        # A clock set back (NTP, a test clock) must not keep the breaker open for longer than a window.
        return now >= self._open_until or self._open_until - now > self.window

    def _allow(self) -> bool:
        """Whether a call may go to the cache now; after a window, only one caller (the probe) may."""
        if not self._tripped:  # the common case, without taking the lock
            return True
        with self._lock:
            if not self._tripped:
                return True
            if self._probing or not self._window_over():
                return False
            self._probing = True
            return True

    def call(self, what: str, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run ``fn(*args, **kwargs)``, a cache call; raise :class:`CacheUnavailable` when it fails or may not run."""
        if not self._allow():
            raise CacheUnavailable("the cache failed recently and is left alone for a while")
        try:
            result = fn(*args, **kwargs)
        except Exception as exc:
            self._failed(what, exc)
            raise CacheUnavailable(f"the cache failed while {what}: {exc}") from exc
        except BaseException:
            with self._lock:  # interrupted (a worker being killed): let another caller probe
                self._probing = False
            raise
        if self._tripped:
            self._recovered()
        return result

    def _failed(self, what: str, exc: Exception) -> None:
        with self._lock:
            self._tripped = True
            self._probing = False
            self._open_until = clock.utcnow().timestamp() + self.window
        self.log.log(
            "cache", logging.WARNING,
            "IndexNow: the cache failed while %s; working from the database without it for %gs",
            what, self.window, exc=exc, traceback=False,  # an outage is told by its error, not by our stack
        )

    def _recovered(self) -> None:
        with self._lock:
            was_tripped, self._tripped, self._probing = self._tripped, False, False
        if was_tripped:
            self.log.log("cache-back", logging.INFO, "IndexNow: the cache answers again; using it")
            self.log.clear("cache")  # a new outage is reported at once


class GuardedCache:
    """The app's cache seen through its breaker: the four calls the extension makes.

    Every failure, and every call while the breaker is open, raises
    :class:`CacheUnavailable` instead of the backend's own error.
    """

    def __init__(self, cache: Any, breaker: CacheBreaker) -> None:
        self.cache = cache
        self.breaker = breaker

    def get(self, key: str) -> Any:
        return self.breaker.call(f"reading {key}", self.cache.get, key)

    def set(self, key: str, value: Any, timeout: int | None = None) -> Any:
        return self.breaker.call(f"writing {key}", self.cache.set, key, value, timeout=timeout)

    def add(self, key: str, value: Any, timeout: int | None = None) -> bool:
        return bool(self.breaker.call(f"adding {key}", self.cache.add, key, value, timeout=timeout))

    def delete(self, key: str) -> Any:
        return self.breaker.call(f"deleting {key}", self.cache.delete, key)
