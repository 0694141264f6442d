"""Log lines that stay short under any outage.

When Redis or the database is down, the same failure happens on every request
of every process: logged each time, it buries the log (56,866 lines in 30 s on
a real blog). :class:`RateLimitedLog` writes each *kind* of failure at most
once per :data:`INTERVAL` seconds, with a traceback only the first time that
kind is logged in the process: the first line shows where it comes from, the
later ones say it is still going on.
"""

from __future__ import annotations

import logging
import threading

from . import clock

logger = logging.getLogger(__name__)

#: Seconds between two lines of the same kind.
INTERVAL = 60.0


class RateLimitedLog:
    """Per-process limiter, shared by every thread of the app (thread-safe)."""

    def __init__(self, interval: float = INTERVAL) -> None:
        self.interval = interval
        self._lock = threading.Lock()
        self._last: dict[str, float] = {}
        self._traced: set[str] = set()

    def log(
        self, kind: str, level: int, message: str, *args: object, exc: BaseException | None = None,
        traceback: bool = True,
    ) -> bool:
        """Log ``message % args`` unless a line of ``kind`` was written less than a minute ago.

        ``exc``, when given, is attached as a traceback the first time ``kind``
        is logged, and summed up as "(ErrorClass: text)" after that; with
        ``traceback=False`` it is always summed up. Returns whether the line
        was written.
        """
        now = clock.utcnow().timestamp()
        with self._lock:
            last = self._last.get(kind)
            # A clock that went backwards (NTP, a test clock) must not silence a kind for good.
            if last is not None and 0 <= now - last < self.interval:
                return False
            self._last[kind] = now
            trace = exc is not None and traceback and kind not in self._traced
            if trace:
                self._traced.add(kind)
        if exc is not None and not trace:
            message += " (%s: %s)"
            args = (*args, type(exc).__name__, _one_line(exc))
        logger.log(level, message, *args, exc_info=exc if trace else None)
        return True

    def clear(self, kind: str) -> None:
        """Forget when ``kind`` was last logged: its next failure is logged at once."""
        with self._lock:
            self._last.pop(kind, None)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 200 else text[:199] + "…"
