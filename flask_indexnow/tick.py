"""The after-response tick: the queue keeps moving without a cron.

Each request registers one tick with ``response.call_on_close``; it runs once
the response has been handed to the client, so the visitor never waits for
it. An idle site answers from the cached next-due time without a query.
"""

from __future__ import annotations

from flask import Flask, Response, g

from . import due
from .lock import CacheLock
from .missing import is_missing_table, missing_tables_message
from .state import IndexNowState, get_state, logger
from .worker import PassResult, process_queue

LOCK_NAME = "indexnow_queue_tick"
_SCHEDULED_FLAG = "_indexnow_tick_scheduled"


def schedule_after_response(response: Response) -> Response:
    """``after_request`` hook: arrange one tick after this response is sent."""
    from flask import current_app

    app: Flask = current_app._get_current_object()  # type: ignore[attr-defined]
    state = get_state(app)
    if not (state.settings.enabled and state.settings.queue_enabled) or g.get(_SCHEDULED_FLAG):
        return response
    if due.known_idle(state):  # this process knows nothing is due yet: not even a tick to schedule
        return response
    setattr(g, _SCHEDULED_FLAG, True)
    response.call_on_close(lambda: _run_detached(app))
    return response


def _run_detached(app: Flask) -> None:
    """Run a tick outside the request; a tick never raises into the server."""
    try:
        with app.app_context():
            tick(get_state(app))
    except Exception as exc:
        if is_missing_table(exc):
            logger.error("IndexNow: the after-response tick failed: %s", missing_tables_message(get_state(app).prefix))
            return
        logger.exception("IndexNow: the after-response tick failed")


def tick(state: IndexNowState) -> PassResult | None:
    """Run one tick; returns the pass result, or None when there was nothing to do.

    Cheap when idle (cache read only), exclusive through the cache lock, and
    limited to INDEXNOW_TICK_BATCH_MAX rows.
    """
    if not state.tick_guard.acquire(blocking=False):
        return None  # this process is ticking already
    try:
        return _tick(state)
    finally:
        state.tick_guard.release()


def _tick(state: IndexNowState) -> PassResult | None:
    settings = state.settings
    try:
        if due.is_idle(state):
            return None
    except Exception:  # the cache is down: fall through to the database
        logger.warning("IndexNow: cache unavailable for the next-due time", exc_info=True)
    lock = CacheLock(state.cache, state.cache_key(LOCK_NAME), settings.tick_lock_ttl)
    try:
        held = lock.acquire()
    except Exception:
        # Without a working cache, run anyway: the database claim is what keeps
        # each claim exactly-once; the lock only saves duplicate work.
        logger.warning("IndexNow: cache unavailable for the tick lock; ticking without it", exc_info=True)
        held = True
        lock = None  # type: ignore[assignment]
    if not held:
        return None
    try:
        result = process_queue(state, limit=min(settings.tick_batch_max, settings.batch_size))
        if settings.scheduler_enabled:
            from .scheduling import ensure_builtin_schedules

            ensure_builtin_schedules(state)
        return result
    finally:
        if lock is not None:
            try:
                lock.release()
            except Exception:
                logger.warning("IndexNow: could not release the tick lock", exc_info=True)
