"""The pass's verification step: between the claim and the first POST, outside any transaction.

:func:`screen` takes a pass's claimed rows and returns the ones to send. Every
``update`` row is verified first (delete rows never are), with no transaction
open: the claim has committed, and what the verification found is written
afterwards in one short transaction of its own, set-based:

- ``indexable`` and ``gone``: sent as claimed;
- ``noindex``, ``canonical``, ``redirect``, ``robots``: the row leaves the queue
  with a history row ``skipped`` (error ``"<reason>: <detail>"``), unless the
  ledger says the page was delivered and not withdrawn since: then the row is
  sent once more as a ``delete`` (the ledger's ``withdrawn_at`` then says so,
  and the next time it is skipped);
- ``error``: retried like a temporary delivery failure (an attempt spent,
  ``last_error`` the page's answer).

Rows left unverified when the tick's budget runs out go back to ``pending``
unspent. The rows' claim token guards every write, as in the rest of the pass.
"""

from __future__ import annotations

import logging
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import datetime
from typing import Any, NamedTuple

import sqlalchemy as sa

from .. import claims, clock, engines, retry, totals
from ..models import url_hash
from ..sqlutil import ROWS_PER_STATEMENT, chunks, upsert
from ..state import IndexNowState, current_app_object
from .verdict import Verdict
from .verifier import Verifier

logger = logging.getLogger(__name__)

#: Seconds of the tick's budget a verification needs at least to be started.
MIN_VERIFY_TIME = 0.05
_ERROR_CHARS = 1000


class ClaimedRow(NamedTuple):
    """A claimed row as the pass holds it (the claim's columns, in its order), for a row sent as a delete."""

    id: int
    host: str
    url: str
    action: str
    attempts: int
    fingerprint: str | None
    engine: str
    url_hash: str
    #: The time of the row's event (the sitemap's lastmod, see sitemap/changes.py).
    updated_at: datetime


class Screened(NamedTuple):
    """What the verification step did: rows skipped, withdrawn (sent as deletes), retried, failed, given back."""

    skipped: int = 0
    withdrawn: int = 0
    retried: int = 0
    failed: int = 0
    released: int = 0


def screen(state: IndexNowState, bind: Any, token: str, rows: Sequence[Any],
           deadline: float | None = None) -> tuple[list[Any], Screened]:
    """Verify the claimed ``update`` rows; return the rows to send (by id) and what was done with the others."""
    mode = state.settings.verify
    updates = [row for row in rows if row.action == "update"] if mode else []
    if not updates:
        return list(rows), Screened()
    verdicts = _verify_all(state, bind, token, mode or "app", updates, deadline)
    now = clock.utcnow()
    unverified = [row.id for row in updates if row.url not in verdicts]
    released = 0
    if unverified:
        released = claims.settle(bind, state.models.queue, token, _unclaimed(now), unverified)
        logger.info("IndexNow: tick budget used up while verifying; %d claimed rows given back to pending", released)
    judged = [row for row in updates if row.url in verdicts]
    withdrawn_ids: set[int] = set()
    retried = failed = 0
    if judged:
        withdrawn_ids, retried, failed = claims.run(
            bind, lambda connection: _write(state, connection, token, judged, verdicts, now))
    skipped = [row for row in judged if not verdicts[row.url].sent and not verdicts[row.url].temporary
               and row.id not in withdrawn_ids]
    _log(skipped, withdrawn_ids, verdicts, judged)
    dropped = {row.id for row in judged if not verdicts[row.url].sent} | set(unverified)
    kept: list[Any] = []
    for row in rows:
        if row.id in withdrawn_ids:
            kept.append(ClaimedRow(*row)._replace(action="delete"))
        elif row.id not in dropped:
            kept.append(row)
    return kept, Screened(len(skipped), len(withdrawn_ids), retried, failed, released)


def _verify_all(state: IndexNowState, bind: Any, token: str, mode: str, rows: Sequence[Any],
                deadline: float | None) -> dict[str, Verdict]:
    """The verdict of each distinct URL of ``rows`` (several engines' rows share one), until the budget ends.

    A long run renews the claim like a long pass does (a third of INDEXNOW_STALE_AFTER).
    """
    verdicts: dict[str, Verdict] = {}
    stamped = time.monotonic()
    renew_every = state.settings.stale_after / 3
    with Verifier(state, current_app_object(), mode, deadline=deadline) as verifier:
        for row in rows:
            if row.url in verdicts:
                continue
            if deadline is not None and time.monotonic() + MIN_VERIFY_TIME >= deadline:
                break
            if time.monotonic() - stamped > renew_every:
                claims.renew(bind, state.models.queue, token, clock.utcnow())
                stamped = time.monotonic()
            verdicts[row.url] = verifier.verify(row.url)
    return verdicts


def _unclaimed(now: datetime) -> dict[str, Any]:
    return {"status": "pending", "claimed_at": None, "claim_token": None, "updated_at": now}


def _write(state: IndexNowState, connection: sa.Connection, token: str, rows: Sequence[Any],
           verdicts: dict[str, Verdict], now: datetime) -> tuple[set[int], int, int]:
    """The verification's outcome in one transaction; returns the ids sent as deletes, the rows retried, failed."""
    queue = state.models.queue
    not_sent = [row for row in rows if not verdicts[row.url].sent and not verdicts[row.url].temporary]
    withdrawn = _to_withdraw(state, connection, not_sent)
    if withdrawn:
        for part in chunks(sorted(withdrawn), ROWS_PER_STATEMENT):
            connection.execute(sa.update(queue).where(*_held(queue, token, part)).values(action="delete"))
    skipped = [row for row in not_sent if row.id not in withdrawn]
    if skipped:
        _history(state, connection, skipped, verdicts, now, lambda _row: "skipped")
        for part in chunks([row.id for row in skipped], ROWS_PER_STATEMENT):
            connection.execute(sa.delete(queue).where(*_held(queue, token, part)))
    retried, failed = _retry(state, connection, token, [row for row in rows if verdicts[row.url].temporary],
                             verdicts, now)
    _remember(state, connection, rows, verdicts, now)
    return withdrawn, retried, failed


def _held(queue: sa.Table, token: str, ids: Sequence[int]) -> list[sa.ColumnElement[bool]]:
    return [queue.c.claim_token == token, queue.c.status == "processing", queue.c.id.in_(list(ids))]


def _to_withdraw(state: IndexNowState, connection: sa.Connection, rows: Sequence[Any]) -> set[int]:
    """The rows whose page engines were sent and never told to drop: the ledger knows (see tables.py)."""
    if not rows:
        return set()
    ledger = state.models.url_state
    delivered: set[tuple[str, str]] = set()
    hashes = sorted({url_hash(row.url) for row in rows})
    for part in chunks(hashes, ROWS_PER_STATEMENT):
        delivered.update(
            (entry.host, entry.url_hash)
            for entry in connection.execute(
                sa.select(ledger.c.host, ledger.c.url_hash).where(
                    ledger.c.url_hash.in_(part), ledger.c.last_success_at.is_not(None),
                    ledger.c.withdrawn_at.is_(None),
                )
            )
        )
    return {row.id for row in rows if (row.host, url_hash(row.url)) in delivered}


def _history(state: IndexNowState, connection: sa.Connection, rows: Sequence[Any], verdicts: dict[str, Verdict],
             now: datetime, status: Any) -> None:
    """One history row per row, as a delivery writes it (the engine's endpoint URL, no HTTP status)."""
    entries = [
        {"host": row.host, "url": row.url, "action": row.action, "status": status(row), "http_status": None,
         "error": str(verdicts[row.url])[:_ERROR_CHARS], "attempts": row.attempts + 1, "created_at": now,
         "engine": engines.resolve(state, row.engine) or row.engine or None}
        for row in rows
    ]
    history = state.models.history
    for part in chunks(entries, ROWS_PER_STATEMENT):
        connection.execute(sa.insert(history), list(part))
    totals.record_rows(connection, state, rows, status, now)  # the metrics' delivery counters, in this transaction


def _retry(state: IndexNowState, connection: sa.Connection, token: str, rows: Sequence[Any],
           verdicts: dict[str, Verdict], now: datetime) -> tuple[int, int]:
    """The temporary verdicts: an attempt spent, due after INDEXNOW_RETRY_DELAY (failed at the last attempt)."""
    if not rows:
        return 0, 0
    settings = state.settings
    queue = state.models.queue
    limit = retry.url_attempt_limit(settings, "retry")
    due = retry.retry_at(settings, None, now)
    gives_up = retry.gives_up(queue.c.attempts + 1, sa.literal(limit))
    by_error: dict[str, list[int]] = defaultdict(list)
    for row in rows:
        by_error[str(verdicts[row.url])[:_ERROR_CHARS]].append(row.id)
    for error, ids in by_error.items():
        for part in chunks(ids, ROWS_PER_STATEMENT):
            # Every term reads the old row (MySQL assigns left to right: attempts last).
            connection.execute(sa.update(queue).where(*_held(queue, token, part)).ordered_values(
                (queue.c.available_at, sa.case((gives_up, queue.c.available_at), else_=due)),
                (queue.c.status, sa.case((gives_up, "failed"), else_="pending")),
                (queue.c.claimed_at, None), (queue.c.claim_token, None), (queue.c.last_error, error),
                (queue.c.last_http_status, None), (queue.c.updated_at, now),
                (queue.c.attempts, queue.c.attempts + 1),
            ))
    failed = [row for row in rows if retry.gives_up(row.attempts + 1, limit)]
    _history(state, connection, rows, verdicts, now,
             lambda row: "failed" if retry.gives_up(row.attempts + 1, limit) else "retry")
    return len(rows) - len(failed), len(failed)


def _remember(state: IndexNowState, connection: sa.Connection, rows: Sequence[Any],
              verdicts: dict[str, Verdict], now: datetime) -> None:
    """Each URL's last verdict in the ledger, for ``explain``."""
    entries = {
        (row.host, row.url): {"host": row.host, "url": row.url, "url_hash": url_hash(row.url),
                              "verdict": str(verdicts[row.url])[:_ERROR_CHARS], "verified_at": now}
        for row in rows
    }
    ordered = sorted(entries.values(), key=lambda e: (e["url_hash"], e["host"]))  # one lock order for every writer
    for part in chunks(ordered, ROWS_PER_STATEMENT):
        upsert(connection, state.models.url_state, part, keys=("url_hash", "host"), update=("verdict", "verified_at"))


def _log(skipped: Sequence[Any], withdrawn: set[int], verdicts: dict[str, Verdict], rows: Sequence[Any]) -> None:
    if skipped:
        counts = Counter(verdicts[row.url].reason for row in skipped)
        logger.info("IndexNow: %d URLs not sent (not indexable): %s", len(skipped),
                    ", ".join(f"{reason} {count}" for reason, count in sorted(counts.items())))
    if withdrawn:
        logger.info("IndexNow: %d URLs delivered before and no longer indexable are sent once more, as deletes",
                    len(withdrawn))
    for row in rows:
        verdict = verdicts[row.url]
        if not verdict.sent:
            logger.debug("IndexNow: %s: %s", row.url, verdict)
