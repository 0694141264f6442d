"""How many events were skipped lately: a count the status page shows.

An event is skipped when its URL cannot be built (a ``BuildError``, no
request for ``url_for``), is refused by validation, or an adapter function
fails; each skip is logged on one line naming the model and the primary key.
The count only points the site owner at the log: it lives in the cache, in
hour buckets that expire after 25 hours and are summed over the last 24.
A cache failure never reaches the code that sent the event.
"""

from __future__ import annotations

import logging
from typing import Any

import sqlalchemy as sa

from .. import clock
from ..state import IndexNowState

logger = logging.getLogger(__name__)

_KEY = "indexnow_skipped:"
#: A bucket lives a little longer than the window it is summed over.
BUCKET_TIMEOUT = 25 * 3600
WINDOW_HOURS = 24


def _hour() -> int:
    return int(clock.utcnow().timestamp() // 3600)


def record(state: IndexNowState, count: int = 1) -> None:
    """Add ``count`` skipped events to this hour's bucket (never raises)."""
    try:
        key = state.cache_key(f"{_KEY}{_hour()}")
        current = state.cache.get(key)
        state.cache.set(key, int(current or 0) + count, timeout=BUCKET_TIMEOUT)
    except Exception:  # the count is a hint; the event's log line is the record
        logger.debug("IndexNow: could not count a skipped event in the cache", exc_info=True)


def last_24h(state: IndexNowState) -> int | None:
    """Skipped events of the last 24 hours, or None when the cache cannot say."""
    try:
        hour = _hour()
        keys = [state.cache_key(f"{_KEY}{h}") for h in range(hour - WINDOW_HOURS + 1, hour + 1)]
        values: list[Any] = state.cache.get_many(*keys)
        return sum(int(v) for v in values if v)
    except Exception:
        logger.debug("IndexNow: could not read the skipped-event count", exc_info=True)
        return None


def describe(resource: Any) -> str:
    """``Page 42``, ``Page (1, 'en')``, ``Page (new)`` or ``Doc``: what a log line names."""
    name = type(resource).__name__
    try:
        state = sa.inspect(resource)
    except Exception:
        return name
    identity = getattr(state, "identity", None)
    if identity is None and getattr(state, "mapper", None) is not None:
        identity = tuple(state.mapper.primary_key_from_instance(resource))  # new in this flush
        identity = identity if all(part is not None for part in identity) else None
    if identity is None:
        return f"{name} (new)"
    key = identity[0] if len(identity) == 1 else identity
    return f"{name} {key!r}" if not isinstance(key, int) else f"{name} {key}"
