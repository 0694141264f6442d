"""The per-process background runner of the tick: responses only wake it.

Running the tick in ``response.call_on_close`` kept it off the response, but
not off the connection: gevent, gthread and waitress read the next request of
a kept-alive connection only once the previous response is closed, and a sync
worker ticking is a worker serving nobody. So the close callback only sets an
event (no query, no cache call, no I/O), and one thread per app and process
(a greenlet when gevent has patched ``threading``) runs the tick, with the
same lock, budget, breaker and "nothing due, no query" rules as before.

A wake does not tick at once: the ticker first waits ``INDEXNOW_TICK_DELAY``
(default two seconds), and the wakes of every response in that time are one
tick. Under a burst of saves a process then ticks every two seconds, not once
per save: a tick's merge, claim, POST and bookkeeping are CPU a sync worker's
requests share (figure 14), while search engines, which crawl a notified page
minutes to hours later, gain nothing from hearing of it within milliseconds. ``testing.wait_for_tick()``
and interpreter shutdown cut the wait short (:meth:`Ticker.hurry`).

The thread is started on the first wake and ends after :data:`IDLE_EXIT`
seconds without one, so an app that is gone (a test's, say) leaves nothing
running; after ``fork()`` (gunicorn's ``--preload``) the child starts its own.
At interpreter shutdown the tick under way, and the one a last response asked
for, may finish (within their budget, :data:`SHUTDOWN_WAIT` in all); no wake
is taken after that.

Where threads do not run (uWSGI without ``--enable-threads`` or ``--threads``),
``INDEXNOW_TICK_MODE = "auto"`` falls back to ticking in the close callback, as
before: see :func:`threads_run`.
"""

from __future__ import annotations

import atexit
import importlib
import logging
import os
import sys
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from typing import Any

logger = logging.getLogger(__name__)

#: Seconds without a wake after which the thread ends (the next wake starts another).
IDLE_EXIT = 30.0
#: The longest interpreter shutdown waits for a tick under way (its budget bounds it sooner).
SHUTDOWN_WAIT = 10.0

_tickers: weakref.WeakSet[Ticker] = weakref.WeakSet()
_shutting_down = False


def gevent_patched() -> bool:
    """True when gevent has monkey-patched ``threading``: the ticker is then a greenlet."""
    monkey = sys.modules.get("gevent.monkey")
    return bool(monkey is not None and monkey.is_module_patched("threading"))


def threads_run(uwsgi_options: Mapping[Any, Any] | None = None) -> bool:
    """Whether a thread started by the app runs alongside the requests of this process.

    Under uWSGI without ``--enable-threads`` (and without ``--threads``, which
    implies it) the GIL is never released to a thread the app starts, so a
    ticker would never tick. Every other server this extension knows (the
    Werkzeug dev server, gunicorn's sync, gthread and gevent workers, waitress,
    mod_wsgi) runs threads. ``uwsgi_options`` is ``uwsgi.opt`` (read here when
    running under uWSGI).
    """
    if uwsgi_options is None:
        uwsgi = sys.modules.get("uwsgi")
        if uwsgi is None:
            return True
        uwsgi_options = getattr(uwsgi, "opt", {})
    options = {(k.decode() if isinstance(k, bytes) else str(k)): v for k, v in uwsgi_options.items()}
    if _truthy(options.get("enable-threads")):
        return True
    threads = options.get("threads")
    try:
        return threads is not None and int(threads.decode() if isinstance(threads, bytes) else threads) > 0
    except (TypeError, ValueError):
        return False


def _truthy(value: Any) -> bool:
    if isinstance(value, bytes):
        value = value.decode()
    if isinstance(value, str):
        return value.strip().lower() not in ("", "0", "false", "no", "off")
    return bool(value)


def use_thread(mode: str) -> bool:
    """Whether INDEXNOW_TICK_MODE ``mode`` runs the tick on the ticker, here and now."""
    if mode == "thread":
        return True
    if mode == "after-response":
        return False
    return threads_run()


class Ticker:
    """Runs ``run(ticking)`` on its own thread (or greenlet) each time it is woken.

    Wakes that come while a tick runs are merged into one more tick after it:
    a burst of requests costs at most one tick in flight and one waiting.
    ``ticking`` False asks only to publish what this process's requests wrote
    (see due.py); True once in a merged wake means a tick.
    """

    def __init__(self, run: Callable[[bool], None], name: str,
                 after_fork: Callable[[], None] | None = None, delay: float = 0.0) -> None:
        self._run = run
        self._name = name
        self._after_fork = after_fork
        self._delay = delay
        self._reset()
        _tickers.add(self)

    def _reset(self) -> None:
        """A fresh start: used at creation and in a forked child, where the parent's thread is gone."""
        self._lock = threading.Lock()
        self._worker: Any = None
        self._event: Any = None
        self._hurry: Any = None  # set: the next gathering of wakes ends at once
        self._wanted: bool | None = None  # None: no wake waiting; else whether it asks for a tick
        self._busy = 0  # ticks running (two for a moment when a stopped ticker's last tick ends late)

    # -- the request side (cheap: no I/O) ---------------------------------------

    def wake(self, ticking: bool = True) -> None:
        """Ask for a tick soon, on the ticker; returns at once."""
        if _shutting_down:
            return
        with self._lock:
            self._wanted = ticking or bool(self._wanted)
            if self._worker is None:
                self._start()
            self._event.set()  # under the lock: the ticker cannot be ending unseen

    def _start(self) -> None:
        if gevent_patched():  # gevent is the host's dependency, not ours: imported by name
            gevent = importlib.import_module("gevent")
            self._event = importlib.import_module("gevent.event").Event()
            self._hurry = importlib.import_module("gevent.event").Event()
            self._worker = gevent.spawn(self._loop, self._event)
        else:
            self._event = threading.Event()
            self._hurry = threading.Event()
            self._worker = threading.Thread(target=self._loop, args=(self._event,), name=self._name, daemon=True)
            self._worker.start()

    # -- the ticker side --------------------------------------------------------

    def _loop(self, event: Any) -> None:
        try:
            while True:
                ticking = self._next(event)
                if ticking is None:
                    return
                try:
                    ticking = self._gather(ticking)
                    self._run(ticking)
                except Exception:  # the runner logs its own failures; this thread must not die of one
                    logger.exception("IndexNow: the background tick failed")
                finally:
                    with self._lock:
                        self._busy -= 1
        finally:  # ended, or killed (a greenlet's GreenletExit): the next wake starts another
            with self._lock:
                if self._event is event:
                    self._worker = self._event = None

    def _next(self, event: Any) -> bool | None:
        """Wait for a wake; what it asks for (a tick or not), or None when this ticker is to end.

        It ends when idle for IDLE_EXIT, when stopped (its event is no longer
        the ticker's), or at interpreter exit once no wake is waiting: a save
        made just before the exit still gets its tick.
        """
        while True:
            woke = True if _shutting_down else event.wait(IDLE_EXIT)
            with self._lock:
                if self._event is not event:
                    return None
                event.clear()
                if self._wanted is not None:
                    ticking, self._wanted = self._wanted, None
                    self._busy += 1
                    return ticking
                if _shutting_down or not woke:
                    return None

    def _gather(self, ticking: bool) -> bool:
        """Wait ``delay`` (unless hurried) so that the wakes of the responses meanwhile join this tick."""
        with self._lock:
            hurry = self._hurry
        if self._delay <= 0 or hurry is None:
            return ticking
        if not _shutting_down:
            hurry.wait(self._delay)
        with self._lock:
            hurry.clear()
            if self._wanted is not None:
                ticking, self._wanted = ticking or self._wanted, None
        return ticking

    # -- waiting and stopping ---------------------------------------------------

    def hurry(self) -> None:
        """End the wait for more wakes now: the tick asked for runs at once (tests, shutdown)."""
        with self._lock:
            hurry = self._hurry
        if hurry is not None:
            hurry.set()

    def idle(self) -> bool:
        """No tick running and none asked for."""
        with self._lock:
            return self._busy == 0 and self._wanted is None

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Wait until the ticker is idle (tests, shutdown), hurrying it; False when ``timeout`` ran out first."""
        deadline = time.monotonic() + timeout
        while not self.idle():
            self.hurry()
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.005)
        return True

    def stop(self, timeout: float = SHUTDOWN_WAIT) -> bool:
        """Let the tick under way finish (up to ``timeout``), then end the ticker; True when it ended."""
        with self._lock:
            event = self._event
            self._wanted = None
            self._worker = self._event = None  # the next wake starts a new ticker
        if event is None:
            return True
        self.hurry()
        event.set()  # the loop wakes, sees the event is no longer its ticker's, and ends
        return self.wait_idle(timeout)

    @property
    def running(self) -> bool:
        with self._lock:
            return self._worker is not None


def _after_fork_in_child() -> None:
    """The parent's threads do not exist in the child, and a lock one of them held would stay held."""
    for ticker in list(_tickers):
        ticker._reset()
        if ticker._after_fork is not None:
            ticker._after_fork()


def _at_exit() -> None:
    global _shutting_down
    _shutting_down = True
    for ticker in list(_tickers):  # no new wake from now on; the one waiting, if any, still runs
        with ticker._lock:
            event = ticker._event
        ticker.hurry()
        if event is not None:
            event.set()
    deadline = time.monotonic() + SHUTDOWN_WAIT
    for ticker in list(_tickers):
        ticker.wait_idle(max(0.0, deadline - time.monotonic()))


if hasattr(os, "register_at_fork"):  # not on Windows
    os.register_at_fork(after_in_child=_after_fork_in_child)
atexit.register(_at_exit)
