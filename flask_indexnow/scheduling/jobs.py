"""Jobs: one run of a handler, claimed atomically, retried with backoff.

A job's life: ``pending`` → claimed (``processing``, ``attempts + 1``, a
random ``claim_token``) → the handler runs with no database transaction open
→ ``completed``, or on an exception ``pending`` again after an exponential
backoff (INDEXNOW_JOB_RETRY_DELAY × 2^(attempts − 1), at most a day), or
``failed`` once ``attempts`` reaches ``max_attempts``. These attempts are the
job's own, unrelated to URL delivery attempts.

The claim, its renewal and the stale recovery are the URL queue's own
(:mod:`flask_indexnow.claims`): ``FOR UPDATE SKIP LOCKED`` on PostgreSQL and
MySQL/MariaDB, one ``UPDATE … RETURNING`` on SQLite. Every
later write matches on the claim token, so a job taken back as stale and
claimed again is finished only by its new owner. While a handler runs, a
lease thread keeps ``claimed_at`` fresh, so a long job is not mistaken for a
crashed one; a job whose worker died is taken back after
INDEXNOW_STALE_AFTER (or failed, if that was its last attempt).

A job with ``expires_at`` (a schedule's ``.expires()``) that no worker
started by then ends ``expired`` without running: the claim never takes it
(its condition says so, so no race with the sweep), and :func:`expire_due`
marks it, with its schedule's history, before each round.
"""

from __future__ import annotations

import logging
import secrets
import threading
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from .. import claims, clock
from ..retry import gives_up, job_retry_at
from ..state import IndexNowState
from .builtins import BUILTIN_HANDLERS

logger = logging.getLogger(__name__)

_ERROR_MAX = 2000


@dataclass(frozen=True)
class ClaimedJob:
    id: int
    handler: str
    queue: str
    payload: Any
    attempts: int
    max_attempts: int
    token: str


@dataclass
class JobsResult:
    """What one round of jobs did."""

    completed: int = 0
    retried: int = 0
    failed: int = 0
    reset_stale: int = 0
    expired: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def ran(self) -> int:
        return self.completed + self.retried + self.failed

    def __str__(self) -> str:
        text = f"{self.ran} job(s) run: {self.completed} completed, {self.retried} to retry, {self.failed} failed"
        return text + (f"; {self.expired} expired unrun" if self.expired else "")


class UnknownHandlerError(LookupError):
    """A job names a handler that this process never registered."""


def dispatch(
    state: IndexNowState,
    handler: str,
    payload: Any = None,
    queue: str = "default",
    *,
    connection: Any = None,
    occurrence_key: str | None = None,
    available_at: datetime | None = None,
    max_attempts: int | None = None,
    expires_at: datetime | None = None,
    schedule: str | None = None,
) -> int:
    """Add a pending job (in ``connection``'s transaction when given); returns its id.

    ``max_attempts`` defaults to INDEXNOW_JOB_MAX_ATTEMPTS; ``expires_at``: not
    started by then, the job ends ``expired``; ``schedule``: the schedule that made it.
    """
    now = clock.utcnow()
    values = {
        "handler": handler, "queue": queue, "payload": payload, "status": "pending", "attempts": 0,
        "max_attempts": max_attempts or state.settings.job_max_attempts, "available_at": available_at or now,
        "occurrence_key": occurrence_key, "created_at": now, "expires_at": expires_at, "schedule": schedule,
    }
    table = state.models.job
    if connection is not None:
        return int(connection.execute(sa.insert(table).values(**values)).inserted_primary_key[0])
    with state.engine().begin() as own:
        return int(own.execute(sa.insert(table).values(**values)).inserted_primary_key[0])


#: Jobs expired per transaction.
EXPIRE_CHUNK = 500


def expire_due(state: IndexNowState, now: datetime | None = None) -> int:
    """End ``expired`` the pending jobs never started whose ``expires_at`` has passed; returns how many.

    The schedule's history says ``expired`` for the occurrence too, in the
    same transaction.
    """
    jobs = state.models.job
    runs = state.models.schedule_run
    now = now or clock.utcnow()
    unstarted_late = sa.and_(jobs.c.status == "pending", jobs.c.expires_at < now, jobs.c.attempts == 0)
    total = 0
    while True:
        with state.engine().begin() as connection:
            ids = list(connection.execute(sa.select(jobs.c.id).where(unstarted_late).limit(EXPIRE_CHUNK)).scalars())
            if ids:
                connection.execute(sa.update(jobs).where(jobs.c.id.in_(ids), unstarted_late).values(
                    status="expired", finished_at=now,
                    last_error="expired: no worker started it before its expiry time"))
                ended = list(connection.execute(
                    sa.select(jobs.c.id).where(jobs.c.id.in_(ids), jobs.c.status == "expired")).scalars())
                if ended:
                    connection.execute(sa.update(runs).where(runs.c.job_id.in_(ended)).values(outcome="expired"))
                total += len(ended)
        if len(ids) < EXPIRE_CHUNK:
            break
    if total:
        logger.warning("IndexNow: %d job(s) expired before a worker could start them", total)
    return total


def reset_stale(state: IndexNowState, now: datetime | None = None) -> int:
    """Take jobs whose worker vanished back to pending (failed, if it was their last attempt)."""
    jobs = state.models.job
    now = now or clock.utcnow()
    message = f"the worker running this job stopped without finishing it (no sign of life for {state.settings.stale_after:g}s)"
    released = {"claimed_at": None, "claim_token": None, "last_error": message}
    taken = claims.take_back_stale(
        state.engine(), jobs, now - timedelta(seconds=state.settings.stale_after),
        {"status": "pending", "available_at": now, **released},
        failed={"status": "failed", "finished_at": now, **released},
        gives_up=gives_up(jobs.c.attempts, jobs.c.max_attempts),
    )
    if taken.count:
        logger.warning("IndexNow: %d stale job(s) taken back (%d failed at their last attempt)",
                       taken.count, taken.failed)
    return taken.count


def claim(state: IndexNowState, queues: Sequence[str] = (), now: datetime | None = None) -> ClaimedJob | None:
    """Atomically take the oldest due pending job (of ``queues``, or any queue), counting an attempt."""
    jobs = state.models.job
    c = jobs.c
    token = secrets.token_hex(16)
    now = now or clock.utcnow()
    # A job past its expiry is never started (expire_due() ends it); a retry was started already.
    fresh = sa.or_(c.expires_at.is_(None), c.attempts > 0, c.expires_at >= now)
    rows = claims.claim(
        state.engine(), jobs, (c.id, c.handler, c.queue, c.payload, c.attempts, c.max_attempts),
        limit=1, now=now, token=token, where=[fresh, *([c.queue.in_(list(queues))] if queues else [])],
        count_attempt=True,
    )
    if not rows:
        return None
    row = rows[0]
    return ClaimedJob(row.id, row.handler, row.queue, row.payload, row.attempts, row.max_attempts, token)


def resolve_handler(state: IndexNowState, name: str) -> Callable[[Any], Any]:
    """The function registered for ``name``: the app's own, else a built-in."""
    handler = state.extension.job_handlers.get(name) or BUILTIN_HANDLERS.get(name)
    if handler is None:
        raise UnknownHandlerError(
            f"no handler named {name!r} is registered in this process "
            f"(register it with @indexnow.job({name!r}) in code the worker imports)"
        )
    return handler


def run_one(state: IndexNowState, job: ClaimedJob, result: JobsResult | None = None) -> str:
    """Run a claimed job and record how it ended; returns the job's new status.

    Nothing the handler does (an exception, ``sys.exit``) escapes: one bad
    job never stops the worker.
    """
    result = result if result is not None else JobsResult()
    error: str | None = None
    started = clock.utcnow()
    try:
        handler = resolve_handler(state, job.handler)
        # The claim is committed; the handler starts with no transaction open.
        state.db.session.remove()
        with _Lease(state, job):
            handler(job.payload)
    except (Exception, SystemExit) as exc:
        error = _describe(exc)
        logger.error("IndexNow: job %s (%s, attempt %d/%d) failed: %s", job.id, job.handler,
                     job.attempts, job.max_attempts, error.splitlines()[0],
                     exc_info=not isinstance(exc, UnknownHandlerError))
    finally:
        try:
            state.db.session.remove()  # whatever the handler left open is rolled back
        except Exception:
            logger.warning("IndexNow: could not clean up the session after job %s", job.id, exc_info=True)
    status = finish(state, job, error, started_at=started)
    if status == "completed":
        result.completed += 1
    elif status == "pending":
        result.retried += 1
    elif status == "failed":
        result.failed += 1
    if error is not None:
        result.errors.append(f"{job.handler}: {error.splitlines()[0]}")
    return status


def finish(state: IndexNowState, job: ClaimedJob, error: str | None, *, started_at: datetime | None = None) -> str:
    """Write the outcome of ``job`` (if we still own it); returns its status.

    ``started_at``: when this attempt began, kept for the run's duration.
    """
    now = clock.utcnow()
    released: dict[str, Any] = {"claimed_at": None, "claim_token": None}
    if started_at is not None:
        released["started_at"] = started_at
    values: dict[str, Any]
    if error is None:
        status, values = "completed", {"finished_at": now, "last_error": None, **released}
    elif gives_up(job.attempts, job.max_attempts):
        status, values = "failed", {"finished_at": now, "last_error": error[:_ERROR_MAX], **released}
    else:
        status = "pending"
        values = {"available_at": job_retry_at(state.settings, job.attempts, now), "last_error": error[:_ERROR_MAX], **released}
    owned = claims.settle(state.engine(), state.models.job, job.token, {"status": status, **values}, [job.id])
    if not owned:
        logger.warning("IndexNow: job %s finished after its claim was taken back; outcome not recorded", job.id)
        return "lost"
    return status


def run_due(
    state: IndexNowState,
    queues: Sequence[str] = (),
    *,
    limit: int | None = None,
    should_stop: Callable[[], bool] = lambda: False,
) -> JobsResult:
    """Take back stale jobs, then claim and run due jobs one at a time.

    Stops after ``limit`` jobs (default INDEXNOW_BATCH_SIZE), when none is
    due, or when ``should_stop()`` says so between two jobs.
    """
    limit = state.settings.batch_size if limit is None else limit
    result = JobsResult(reset_stale=reset_stale(state), expired=expire_due(state))
    for _ in range(limit):
        if should_stop():
            break
        job = claim(state, queues)
        if job is None:
            break
        run_one(state, job, result)
    return result


class _Lease:
    """While a handler runs, keep its ``claimed_at`` fresh from a side thread."""

    def __init__(self, state: IndexNowState, job: ClaimedJob) -> None:
        self.engine = state.engine()
        self.table = state.models.job
        self.job = job
        self.every = max(1.0, state.settings.stale_after / 3)
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._renew, name=f"indexnow-job-{job.id}-lease", daemon=True)

    def _renew(self) -> None:
        while not self.done.wait(self.every):
            try:
                claims.renew(self.engine, self.table, self.job.token, clock.utcnow(), [self.job.id])
            except Exception:
                logger.warning("IndexNow: could not renew the claim of job %s", self.job.id, exc_info=True)

    def __enter__(self) -> _Lease:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.thread.join()


def _describe(exc: BaseException) -> str:
    if isinstance(exc, UnknownHandlerError):
        return str(exc)
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return text[:_ERROR_MAX]
