"""The retry policy, in one place: what an answer means, when to try again, when to give up.

- :func:`classify`: the HTTP table (2xx success; 429, 5xx and a 403 "not verified yet" temporary; every
  other answer permanent).
- :func:`parse_retry_after` and :func:`retry_at`: when a URL batch is tried again
  (INDEXNOW_RETRY_DELAY, or the endpoint's Retry-After when longer, capped at :data:`MAX_RETRY_AFTER`).
- :func:`job_retry_at`: a job's exponential backoff (INDEXNOW_JOB_RETRY_DELAY × 2^(attempts − 1),
  capped at :data:`MAX_BACKOFF`).
- :func:`gives_up` and :func:`url_attempt_limit`: the give-up rule, for URLs and jobs alike:
  an item fails for good once its attempts reach the limit.
- :func:`is_transient` and :func:`retrying`: a short database transaction refused for a
  transient reason (deadlock, serialization failure, lock timeout, "database is locked")
  is simply run again; URL passes and jobs share the rule.

(The set-based SQL in :mod:`flask_indexnow.delivery.setsql` writes :func:`gives_up` as
``attempts + 1 >= :limit``, with the limit from :func:`url_attempt_limit`.)
"""

from __future__ import annotations

import email.utils
import logging
import random
import re
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, TypeVar, overload

import sqlalchemy as sa

from . import clock
from .config import Settings
from .refusal import read_refusal
from .sqlutil import error_codes

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: Retry-After values beyond this are treated as this (a day), so a bad header
#: cannot park a row for years.
MAX_RETRY_AFTER = 86_400
#: The longest a job's retry waits, whatever the backoff says.
MAX_BACKOFF = 86400.0
#: How many times a short transaction is tried in all before a transient error is raised.
DB_ATTEMPTS = 4
_SECONDS_RE = re.compile(r"[0-9]+")
#: PostgreSQL SQLSTATEs: serialization failure, deadlock, lock not available (lock_timeout).
_TRANSIENT_SQLSTATES = frozenset({"40001", "40P01", "55P03"})
#: MySQL/MariaDB error numbers: lock wait timeout, deadlock.
_TRANSIENT_MYSQL_ERRORS = frozenset({1205, 1213})


def classify(status: int, body: bytes = b"") -> str:
    """The HTTP table: 2xx success; 429 and 5xx temporary; every other answer permanent.

    A 403 whose ``body`` says the engine has not finished verifying the key
    (``SiteVerificationNotCompleted``) is temporary too: see :mod:`.refusal`.
    """
    if 200 <= status < 300:
        return "success"
    if status == 429 or 500 <= status < 600:
        return "retry"
    if status == 403 and body and read_refusal(body).temporary:
        return "retry"
    return "failed"


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds from a Retry-After header given as seconds or an HTTP date.

    Unreadable values give None (the configured retry delay applies); values
    are capped at :data:`MAX_RETRY_AFTER`.
    """
    if not value:
        return None
    value = value.strip()
    seconds: float
    if _SECONDS_RE.fullmatch(value):  # ASCII digits only: str.isdigit() also takes "²"
        seconds = float(value)
    else:
        try:
            when = email.utils.parsedate_to_datetime(value)
            seconds = (clock.as_utc(when) - (now or clock.utcnow())).total_seconds()
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
    return max(0.0, min(seconds, MAX_RETRY_AFTER))


def retry_at(settings: Settings, retry_after: float | None, now: datetime) -> datetime:
    """When a URL batch answered "retry" is due again: INDEXNOW_RETRY_DELAY, or Retry-After when longer."""
    delay = settings.retry_delay
    if retry_after is not None and retry_after > delay:
        delay = retry_after
    return now + timedelta(seconds=delay)


def job_retry_at(settings: Settings, attempts: int, now: datetime) -> datetime:
    """When a failed job runs again: exponential backoff from INDEXNOW_JOB_RETRY_DELAY, at most a day."""
    delay = min(MAX_BACKOFF, settings.job_retry_delay * 2 ** (attempts - 1))
    return now + timedelta(seconds=delay)


def url_attempt_limit(settings: Settings, outcome: str) -> int:
    """The attempts limit a URL batch's outcome is judged by: a permanent answer (0) fails every row."""
    return 0 if outcome == "failed" else settings.max_attempts


@overload
def gives_up(attempts: int, limit: int) -> bool: ...
@overload
def gives_up(attempts: sa.ColumnElement[int], limit: sa.ColumnElement[int]) -> sa.ColumnElement[bool]: ...
def gives_up(attempts: Any, limit: Any) -> Any:
    """The give-up rule: an item whose attempts (this one counted) reach its limit fails for good.

    Works on numbers and on SQL columns alike.
    """
    return attempts >= limit


def is_transient(exc: sa.exc.DBAPIError) -> bool:
    """A deadlock, serialization failure or lock timeout: the transaction may simply be run again."""
    sqlstate, number = error_codes(exc)
    if sqlstate in _TRANSIENT_SQLSTATES or number in _TRANSIENT_MYSQL_ERRORS:
        return True
    return "database is locked" in str(exc.orig)  # SQLite, after its busy timeout


#: Errors after which the transaction they happened in is over, or cannot be trusted to go on: PostgreSQL's
#: "current transaction is aborted" and "invalid savepoint"; MySQL/MariaDB's "SAVEPOINT does not exist"
#: (a deadlock rolled the whole transaction back) and "lock wait timeout" (may roll it back too).
_ENDED_SQLSTATES = frozenset({"25P02", "3B001"})
_ENDED_MYSQL_ERRORS = frozenset({1305})


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and the errors it was raised from or during, without repeats."""
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and all(current is not known for known in seen):
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def first_refusal(exc: BaseException) -> BaseException:
    """The transient refusal behind ``exc``, if any, else ``exc``.

    After a deadlock inside a savepoint, MySQL/MariaDB refuse the ``ROLLBACK
    TO SAVEPOINT`` too ("SAVEPOINT does not exist"), and that is what
    SQLAlchemy raises; the site should see the deadlock, which it knows to retry.
    """
    return next((e for e in _chain(exc) if isinstance(e, sa.exc.DBAPIError) and is_transient(e)), exc)


#: Set on an error that is known to have ended its transaction (see :func:`mark_transaction_ended`).
_ENDED_MARK = "_indexnow_ended_transaction"


def mark_transaction_ended(exc: BaseException) -> None:
    """Record that ``exc`` ended the transaction it happened in, whatever its kind.

    For a failure that the code meeting it knows to be fatal to the
    transaction (on PostgreSQL, any statement that fails outside a savepoint),
    so that :func:`ends_transaction` does not take it for a harmless one.
    """
    setattr(exc, _ENDED_MARK, True)


def ends_transaction(exc: BaseException) -> bool:
    """Whether ``exc`` (or an error it was raised from or during) may have ended the transaction it happened in.

    A savepoint rolled back after a failed write is harmless only when the
    transaction is provably alive: not after a transient refusal (a deadlock
    rolls back the whole transaction on InnoDB; a serialization failure dooms
    it; a lock timeout may), not after a failed ``ROLLBACK TO SAVEPOINT``, not
    on a connection that broke. Such an error is the site's to handle, as if
    its own statement had met it (issue 18).
    """
    for current in _chain(exc):
        if getattr(current, _ENDED_MARK, False) or isinstance(current, sa.exc.PendingRollbackError):
            return True
        if isinstance(current, sa.exc.DBAPIError):
            if current.connection_invalidated or is_transient(current):
                return True
            sqlstate, number = error_codes(current)
            if sqlstate in _ENDED_SQLSTATES or number in _ENDED_MYSQL_ERRORS:
                return True
    return False


def retrying(step: Callable[[], T], attempts: int = DB_ATTEMPTS) -> T:
    """Run ``step`` (one whole short transaction) again when the database refused it for a transient reason.

    Each try must be a whole transaction, rolled back on failure, so a retry
    repeats nothing half-done. Workers racing on the same rows can deadlock
    on MySQL/MariaDB (and, more rarely, PostgreSQL); the database rolls one
    back, which is safe to redo. Other errors are raised at once.
    """
    for attempt in range(1, attempts + 1):
        try:
            return step()
        except sa.exc.DBAPIError as exc:
            if attempt == attempts or not is_transient(exc):
                raise
            logger.info("IndexNow: database busy (%s); trying again", exc.orig)
            time.sleep(random.uniform(0.005, 0.05) * attempt)
    raise AssertionError("unreachable")  # pragma: no cover
