"""``flask indexnow work``: the long-running worker.

At its first evaluation of the schedules the worker syncs the declared ones
(:mod:`.sync`). Each loop: evaluate schedules (at start, then about once a minute), run a URL
pass, run due jobs (stale ones taken back first). When a loop found nothing
to do, the worker sleeps ``sleep`` seconds; a full batch makes it go again at
once. After a URL pass that could not send, the next one waits: until the
endpoint pause ends when that was the reason (at most :data:`URL_BACKOFF`),
:data:`URL_BACKOFF` otherwise; the loop's sleep is cut short to be on time.
A stop request (SIGTERM, SIGINT, :meth:`Worker.stop`) is honoured between two
steps, so the batch under way is always finished.

The worker is built to stay up: an exception in one step is logged and the
loop goes on; a lost database connection disposes the engine's pool and
retries with a growing pause (up to a minute), so the worker reconnects once
the database is back. ``db.session.remove()`` ends every loop, so no state
or transaction outlives it.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from types import FrameType
from typing import Any

import sqlalchemy as sa

from .. import clock
from ..delivery.worker import PassResult, process_queue
from ..errors import TablesMissingError
from ..missing import is_missing_column, is_missing_table, outdated_tables_message, tables_missing_error
from ..sqlutil import error_text
from ..state import IndexNowState
from . import jobs, scheduler
from .builtins import ensure_builtin_schedules
from .sync import sync

logger = logging.getLogger(__name__)

#: Seconds between two evaluations of the schedules.
SCHEDULE_EVERY = 60.0
#: Longest pause after repeated database errors.
MAX_ERROR_PAUSE = 60.0
#: After a pass that could not send, how long until the next URL pass: a bad key or
#: endpoint setting is not fixed by trying every loop, and would log a warning each
#: time. An endpoint pause ends at a known time: the next pass comes then, if sooner.
URL_BACKOFF = 60.0


@dataclass
class LoopResult:
    """What one loop of the worker did."""

    urls: PassResult | None = None
    jobs: jobs.JobsResult | None = None
    dispatched: int | None = None
    error: str | None = None

    @property
    def busy(self) -> bool:
        """True when a batch was full: more work is probably waiting."""
        return bool(self.urls and self.urls.claimed) or bool(self.jobs and self.jobs.ran)

    def __str__(self) -> str:
        parts = []
        if self.dispatched is not None:
            parts.append(f"schedules: {self.dispatched} job(s) dispatched")
        if self.urls is not None:
            parts.append(f"URLs: {self.urls}")
        if self.jobs is not None:
            parts.append(f"jobs: {self.jobs}")
        if self.error:
            parts.append(f"error: {self.error}")
        return "; ".join(parts)


@dataclass
class Worker:
    """The work loop of one process; :meth:`run` until :meth:`stop`."""

    state: IndexNowState
    queues: Sequence[str] = ()
    sleep: float = 5.0
    schedule_every: float = SCHEDULE_EVERY
    stopping: threading.Event = field(default_factory=threading.Event)
    loops: int = 0
    _next_schedules: datetime | None = None
    _next_urls: datetime | None = None
    _errors_in_a_row: int = 0
    _synced: bool = False

    def stop(self) -> None:
        """Ask the loop to end after the step under way."""
        self.stopping.set()

    @property
    def stop_requested(self) -> bool:
        return self.stopping.is_set()

    def run_once(self, *, schedules: bool = False) -> LoopResult:
        """One loop: schedules (when asked), a URL pass, due jobs. Never raises for a failed step."""
        result = LoopResult()
        try:
            if schedules:
                if not self._synced:
                    logger.info("IndexNow worker: declared schedules synced: %s", sync(self.state))
                    self._synced = True
                if self.state.settings.scheduler_enabled:
                    ensure_builtin_schedules(self.state)
                result.dispatched = scheduler.tick(self.state)
            if not self.stop_requested and self._urls_due():
                result.urls = process_queue(self.state)
                if result.urls.skipped_reason:
                    self._next_urls = self._url_backoff_end(result.urls)
            if not self.stop_requested:
                result.jobs = jobs.run_due(self.state, self.queues, should_stop=lambda: self.stop_requested)
            self._errors_in_a_row = 0
        except sa.exc.DBAPIError as exc:
            if is_missing_table(exc):  # no reconnecting will create them: stop with the one line
                raise tables_missing_error(self.state.prefix) from None
            if is_missing_column(exc):  # nor bring them up to date
                raise TablesMissingError(outdated_tables_message(self.state.prefix)) from None
            result.error = error_text(exc)
            self._errors_in_a_row += 1
            logger.error("IndexNow worker: database error, reconnecting: %s", result.error)
            self._reconnect()
        except Exception as exc:
            result.error = error_text(exc)
            self._errors_in_a_row += 1
            logger.exception("IndexNow worker: a step failed; going on")
        finally:
            self.loops += 1
            try:
                self.state.db.session.remove()
            except Exception:
                logger.warning("IndexNow worker: could not remove the session", exc_info=True)
        return result

    def run(self, max_loops: int | None = None) -> None:
        """Loop until a stop is requested (or ``max_loops`` loops have run)."""
        logger.info("IndexNow worker started (queues: %s)", ", ".join(self.queues) or "all")
        while not self.stop_requested and (max_loops is None or self.loops < max_loops):
            now = clock.utcnow()
            evaluate = self._next_schedules is None or now >= self._next_schedules
            if evaluate:
                self._next_schedules = now + timedelta(seconds=self.schedule_every)
            result = self.run_once(schedules=evaluate)
            if self.stop_requested or (max_loops is not None and self.loops >= max_loops):
                break
            if result.error:
                self.stopping.wait(min(MAX_ERROR_PAUSE, max(self.sleep, 1.0) * 2 ** (self._errors_in_a_row - 1)))
            elif not result.busy:
                self.stopping.wait(self._idle_wait())
        logger.info("IndexNow worker stopped after %d loop(s)", self.loops)

    def _urls_due(self) -> bool:
        return self._next_urls is None or clock.utcnow() >= self._next_urls

    def _url_backoff_end(self, urls: PassResult) -> datetime:
        """When the next URL pass may run after one that could not send.

        A pause the endpoint asked for ends at a known time: the pass comes
        then, so sending resumes as soon as it may (still at most
        :data:`URL_BACKOFF` away, should the clock jump). Any other reason
        waits :data:`URL_BACKOFF`.
        """
        latest = clock.utcnow() + timedelta(seconds=URL_BACKOFF)
        return latest if urls.paused_until is None else min(urls.paused_until, latest)

    def _idle_wait(self) -> float:
        """Seconds to sleep after a loop with nothing to do: ``sleep``, or less when the URL pass is due sooner."""
        until_urls = 0.0 if self._next_urls is None else (self._next_urls - clock.utcnow()).total_seconds()
        return min(self.sleep, until_urls) if until_urls > 0 else self.sleep

    def _reconnect(self) -> None:
        """Drop every pooled connection; the next loop opens fresh ones."""
        try:
            self.state.db.session.remove()
        except Exception:
            pass
        try:
            self.state.engine().dispose()
        except Exception:
            logger.warning("IndexNow worker: could not dispose of the connection pool", exc_info=True)

    @contextlib.contextmanager
    def signals_handled(self) -> Iterator[None]:
        """While inside, SIGTERM and SIGINT ask for a clean stop; a second SIGINT interrupts."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return

        def on_signal(signum: int, frame: FrameType | None) -> None:
            if signum == signal.SIGINT and self.stop_requested:
                raise KeyboardInterrupt
            logger.info("IndexNow worker: %s received, finishing the current batch", signal.Signals(signum).name)
            self.stop()

        previous: dict[int, Any] = {}
        for name in (signal.SIGTERM, signal.SIGINT):
            previous[name] = signal.signal(name, on_signal)
        try:
            yield
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)

