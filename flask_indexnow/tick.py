"""The after-response tick: the queue keeps moving without a cron.

Each request registers one tick with ``response.call_on_close``: once the
response has been handed to the client, the close callback wakes this
process's ticker (ticker.py), which runs the tick on its own thread, so
neither the visitor nor the next request on the same connection waits for it.
Where threads do not run, the close callback runs the tick itself
(INDEXNOW_TICK_MODE). An idle site answers from the cached next-due time
without a query.
"""

from __future__ import annotations

import logging
import os
import random
import threading
import time

from flask import Flask, Response, g, request

from . import clock, due, outbound
from .breaker import CacheUnavailable
from .delivery.worker import PassResult, process_queue
from .lock import CacheLock
from .machinelock import MachineLock, lock_path
from .missing import is_missing_table, missing_tables_message
from .scheduling import ensure_builtin_schedules
from .state import IndexNowState, current_app_object, get_state
from .ticker import Ticker, use_thread
from .verify.fetch import ENVIRON_KEY as VERIFY_ENVIRON_KEY

logger = logging.getLogger(__name__)

LOCK_NAME = "indexnow_queue_tick"
_SCHEDULED_FLAG = "_indexnow_tick_scheduled"


def schedule_after_response(response: Response) -> Response:
    """``after_request`` hook: arrange one tick after this response is sent.

    Nothing here talks to the cache or the database: the decision comes from
    this process's memory, and what the request wrote is published to the
    cache by the tick, after the response.
    """

    if request.environ.get(VERIFY_ENVIRON_KEY):  # the extension asking for a page (INDEXNOW_VERIFY): no tick
        return response
    app: Flask = current_app_object()
    state = get_state(app)
    if not state.settings.enabled or g.get(_SCHEDULED_FLAG):
        return response
    # known_idle: this process knows nothing is due yet, so not even a tick to schedule.
    ticking = state.settings.queue_enabled and not due.known_idle(state)
    if not ticking and not due.has_pending(state):
        return response
    setattr(g, _SCHEDULED_FLAG, True)
    ticker = state.ticker
    if ticker is not None:
        response.call_on_close(lambda: ticker.wake(ticking))
    else:  # INDEXNOW_TICK_MODE "after-response", or a server whose threads never run
        response.call_on_close(lambda: _run_detached(app, ticking))
    return response


def make_ticker(app: Flask, state: IndexNowState) -> Ticker | None:
    """The app's ticker, or None when INDEXNOW_TICK_MODE (or the server) wants the tick in the close callback."""
    mode = state.settings.tick_mode
    if use_thread(mode):
        return Ticker(lambda ticking: _run_detached(app, ticking, wait=True), name=f"indexnow-tick-{app.name}",
                      after_fork=lambda: _after_fork(state), delay=state.settings.tick_delay)
    if mode == "auto":
        logger.info("IndexNow: this server runs no threads started by the app (uWSGI without "
                    "--enable-threads): each tick runs after its response, in the request's worker")
    return None


def _after_fork(state: IndexNowState) -> None:
    """In a forked child: new, free locks (the parent's ticker may have held one at the fork),
    and an HTTP session of its own (the parent's kept-alive sockets stay the parent's)."""
    state.tick.guard = threading.Lock()
    state.lock = threading.Lock()
    if state.tick.machine_lock is not None:
        state.tick.machine_lock.release()  # the parent's copy of a held lock file: the parent keeps the lock
    outbound.forget_session_after_fork(state)


def _run_detached(app: Flask, ticking: bool = True, wait: bool = False) -> None:
    """Run a tick (or only publish the due time) outside the request; never raises into the server.

    ``wait``: on the tick thread, wait for another process's tick to end instead of skipping this one.
    """
    state: IndexNowState = app.extensions["indexnow"]
    try:
        with app.app_context():
            if ticking:
                tick(state, wait=wait)
            else:
                due.publish_pending(state)
    except Exception as exc:
        if is_missing_table(exc):
            state.quiet_log.log("tick-tables", logging.ERROR,
                                "IndexNow: the after-response tick failed: " + missing_tables_message(state.prefix))
            return
        state.quiet_log.log("tick-failed", logging.ERROR, "IndexNow: the after-response tick failed", exc=exc)


def tick(state: IndexNowState, *, wait: bool = False) -> PassResult | None:
    """Run one tick; returns the pass result, or None when there was nothing to do.

    Cheap when idle (cache read only), exclusive through the cache lock and the
    machine's lock file, limited to INDEXNOW_TICK_BATCH_MAX rows and to
    INDEXNOW_TICK_BUDGET seconds. ``wait``: while another process of this
    machine ticks, wait (up to INDEXNOW_TICK_BUDGET) for it to end instead of
    skipping: the tick thread does, so an event its process wrote meanwhile is
    not left for the next request; a close callback, whose worker a visitor may
    be waiting for, never does.
    """
    if not state.tick.guard.acquire(blocking=False):
        return None  # this process is ticking already
    try:
        return _tick(state, wait)
    finally:
        state.tick.guard.release()


def _lockless_tick_allowed(state: IndexNowState) -> bool:
    """Whether this process may tick without the cache lock now (then it counts as its tick).

    Without the cache, delivery goes on: the tick's guard keeps this process to one
    tick at a time, and the database claim gives each row to one pass. But
    with the lock gone every web process would tick after each of its
    responses, and a sync worker ticking is a worker serving nobody: with a
    slow endpoint, every page slowed down. So each process ticks at most once
    per INDEXNOW_TICK_LOCK_TTL, the longest the lock would have kept the
    others out. The processes all notice the outage at about the same time,
    so each waits a random 1 to 1.5 TTLs between its ticks: after the first,
    their ticks drift apart instead of taking every worker at once. The
    caller holds the tick's guard, so no other thread is here.
    """
    now = time.monotonic()
    after = state.tick.lockless_after
    if after is not None and now < after:
        return False
    state.tick.lockless_after = now + state.settings.tick_lock_ttl * random.uniform(1.0, 1.5)
    return True


def _tick(state: IndexNowState, wait: bool) -> PassResult | None:
    settings = state.settings
    published = due.publish_pending(state)
    # A row this process wrote is due now: no need to ask the cache whether anything is.
    if (published is None or published > clock.utcnow().timestamp()) and due.is_idle(state):
        return None
    machine = _machine_lock(state)
    if not machine.acquire(wait=settings.tick_budget if wait else 0.0):
        return None
    try:
        return _locked_tick(state)
    finally:
        machine.release()


def _machine_lock(state: IndexNowState) -> MachineLock:
    """This app's lock file: one per database and table prefix, shared by every process of the machine."""
    if state.tick.machine_lock is None:
        url = state.engine().url
        if url.get_backend_name() == "sqlite" and url.database and url.database != ":memory:":
            url = url.set(database=os.path.abspath(url.database))
        identity = f"{url.render_as_string(hide_password=True)}|{state.cache_key(LOCK_NAME)}"
        state.tick.machine_lock = MachineLock(lock_path(identity))
    return state.tick.machine_lock


def _locked_tick(state: IndexNowState) -> PassResult | None:
    settings = state.settings
    deadline = time.monotonic() + settings.tick_budget
    lock: CacheLock | None = CacheLock(state.guarded_cache, state.cache_key(LOCK_NAME), settings.tick_lock_ttl)
    try:
        held = lock is not None and lock.acquire()
    except CacheUnavailable:
        if not _lockless_tick_allowed(state):
            return None
        state.quiet_log.log("tick-lock", logging.WARNING,
                            "IndexNow: cache unavailable for the tick lock; ticking without it, at most "
                            f"once every {settings.tick_lock_ttl} s in each process")
        held, lock = True, None
    if lock is not None:
        state.tick.lockless_after = None  # the cache answers: a later outage starts afresh
    if not held:
        return None
    try:
        result = process_queue(state, limit=min(settings.tick_batch_max, settings.batch_size), deadline=deadline)
        if settings.scheduler_enabled:
            ensure_builtin_schedules(state)
        return result
    finally:
        if lock is not None:
            try:
                lock.release()
            except CacheUnavailable:
                pass  # it expires after INDEXNOW_TICK_LOCK_TTL
