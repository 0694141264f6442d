"""One worker pass over the queue.

The pass is built so that no database transaction is open while a request is
in flight: the claim commits before the first POST, and each POST's outcome is
written in its own short transaction right after it returns. The pass checks
out one connection and runs all its short transactions on it. Rows are claimed
with a random token (:mod:`flask_indexnow.claims`, shared with the jobs); every
later update matches on that token, so a row whose claim was taken back
(stale) or reset by a newer event is never deleted or failed by a delivery
that no longer owns it.
"""

from __future__ import annotations

import contextlib
import logging
import math
import operator
import secrets
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, TypeAlias

import requests
import sqlalchemy as sa

from .. import claims, clock, due, engines, retry, signals
from ..breaker import CacheUnavailable
from ..cachekind import cache_is_shared
from ..claims import Bind
from ..config import key_problem
from ..keys.rules import key_for
from ..models import url_hash
from ..outbound import app_session
from ..sitemap.changes import changes_of, record_changes, records_changes
from ..sqlutil import ROWS_PER_STATEMENT, chunks, upsert
from ..state import Engine, IndexNowState, current_app_object
from ..verify.screen import screen
from . import passlog
from .budget import take as take_budget
from .endpoint import (
    MAX_URLS_PER_REQUEST,
    Answer,
    post_batch,
    sending_problem,
)
from .merge import merge_inbox
from .setsql import finish_batch

logger = logging.getLogger(__name__)

#: Extra requests one rejected batch may cost while it is split in halves to
#: find the URLs the endpoint really refuses. With the limit reached,
#: what is left is failed as it stands.
SPLIT_REQUEST_BUDGET = 32
_PAUSE_KEY = "indexnow_endpoint_paused:"
#: Seconds a cached pause may lie beyond the longest one a process writes (clocks of
#: several machines differ a little).
_PAUSE_SLACK = 300
#: What the pause log line adds when the pause is not shared (see :func:`pause_endpoint`).
_PAUSE_NOT_SHARED = "; other processes do not share the pause without a shared cache such as RedisCache"
#: Seconds of the tick's budget a POST needs at least to be started: with less
#: left, its rows go back to ``pending`` unspent rather than spend an attempt on
#: a request that cannot be answered in time.
MIN_POST_TIME = 0.05
#: A pass that leaves due rows behind refreshes the cached next-due time at most this often (seconds).
DUE_REFRESH_EVERY = 10.0


@dataclass
class PassResult:
    """What one pass did. ``skipped_reason`` says why nothing was sent, if so.

    ``paused_until`` is set when nothing was sent because every endpoint asked
    to pause: when the first pause ends, so a worker knows when to try again.
    """

    claimed: int = 0
    succeeded: int = 0
    retried: int = 0
    failed: int = 0
    reset_stale: int = 0
    dry_run: int = 0
    requests: int = 0
    released: int = 0
    #: Rows not sent because their page is not indexable (INDEXNOW_VERIFY).
    skipped: int = 0
    skipped_reason: str | None = None
    paused_until: datetime | None = None

    def as_dict(self) -> dict[str, Any]:
        """The counts as JSON-ready values (``paused_until`` as an ISO time)."""
        data = asdict(self)
        data["paused_until"] = self.paused_until.isoformat() if self.paused_until else None
        return data

    def __str__(self) -> str:
        if self.skipped_reason:
            return f"nothing sent: {self.skipped_reason}"
        text = (
            f"claimed {self.claimed}, succeeded {self.succeeded}, retried {self.retried}, "
            f"failed {self.failed}, stale reset {self.reset_stale}"
        )
        if self.dry_run:
            text += f", dry run {self.dry_run}"
        if self.skipped:
            text += f", skipped {self.skipped} (not indexable)"
        return text


#: A claimed row as the database returned it (a SQLAlchemy ``Row``, no object per row):
#: ``id``, ``host``, ``url``, ``action``, ``attempts``, ``fingerprint``, ``engine``, ``url_hash``, ``updated_at``.
Claimed: TypeAlias = "sa.Row[Any]"


def process_queue(state: IndexNowState, limit: int | None = None, *, deadline: float | None = None) -> PassResult:
    """Run one pass; see :meth:`IndexNow.process_queue`.

    ``deadline`` (a :func:`time.monotonic` instant, the tick's budget) bounds
    the sending: no POST outlives it, and the rows not sent by then go back
    to ``pending`` without spending an attempt.
    """
    settings = state.settings
    if limit is None:
        limit = settings.batch_size
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"limit must be a positive whole number, got {limit!r}")
    problem = sending_problem(settings)
    if problem:
        logger.warning("IndexNow: not sending: %s", problem)
        return PassResult(skipped_reason=problem)
    pauses = [endpoint_pause(state, engine) for engine in engines.configured(state)]
    if all(pause is not None for pause in pauses):  # every engine paused (with one engine: that one)
        paused_until, status = min(pause for pause in pauses if pause is not None)
        reason = f"the endpoint asked to pause (HTTP {status}) until {paused_until:%Y-%m-%d %H:%M:%S} UTC"
        logger.info("IndexNow: not sending: %s", reason)
        due.remember(state, paused_until.timestamp())  # nothing can be sent before then: no tick needed
        return PassResult(skipped_reason=reason, paused_until=paused_until)

    engine = state.engine()
    result = PassResult()
    now = clock.utcnow()
    token = secrets.token_hex(16)
    try:
        # One connection for the whole pass; between its short transactions it holds nothing.
        with claims.connection(engine) as connection:
            merge_inbox(state, connection)  # what the site's transactions queued, into the queue first
            result.reset_stale = _sweep_if_due(state, connection, now)
            rows = claim(state, connection, limit, now, token)
            result.claimed = len(rows)
            if rows and state.settings.verify:  # INDEXNOW_VERIFY: only indexable pages go on (verify/screen.py)
                rows, screened = screen(state, connection, token, rows, deadline)
                result.skipped, result.released = screened.skipped, screened.released
                result.retried, result.failed = screened.retried, screened.failed
            if rows:
                _deliver_all(state, connection, token, rows, result, now, deadline)
            next_stamp = _next_due(state, connection, now, drained=result.claimed < limit)
    except BaseException:
        if result.claimed:
            # The database failed us, or the process is being interrupted: give back what
            # this pass still holds now rather than after INDEXNOW_STALE_AFTER (on a fresh
            # connection: the pass's own may be the one that broke).
            _release_unfinished(state, engine, token)
        raise
    if next_stamp is not None:
        due.store(state, next_stamp)  # after the connection is back: a slow cache never holds one
        state.worker.due_refreshed_at = now.timestamp()
    if result.claimed or result.reset_stale:
        logger.info("IndexNow pass endpoint=%s: %s", settings.endpoint, result)
    return result


def _deliver_all(state: IndexNowState, connection: sa.Connection, token: str, rows: list[Claimed],
                 result: PassResult, now: datetime, deadline: float | None) -> None:
    """Steps 3-5 for every claimed row: one batch is the rows of one engine and one host (see setsql.finish_batch)."""
    by_host: dict[tuple[str, str], list[Claimed]] = defaultdict(list)
    for row in rows:
        by_host[(row.engine, row.host)].append(row)
    holder = ClaimHolder(token, now)
    batches = [(host, list(batch)) for (_engine, host), host_rows in by_host.items()
               for batch in chunks(host_rows, MAX_URLS_PER_REQUEST)]
    with contextlib.nullcontext(app_session(state)) as http:  # the app's kept-alive session
        for host, batch in batches:
            if _out_of_time(deadline):
                given_back = _give_back(state, connection, token)
                result.released += given_back
                logger.info("IndexNow: tick budget used up; %d claimed rows given back to pending", given_back)
                break
            _deliver(state, connection, http, token, host, batch, result, [SPLIT_REQUEST_BUDGET],
                     deadline=deadline, holder=holder)


def _unclaimed(now: datetime) -> dict[str, Any]:
    """The values that give a claimed row back to ``pending``, attempts untouched.

    ``updated_at`` stays the time of the row's event: giving a row back is no
    change of its page (see :func:`claims.keep_stamp`).
    """
    return {"status": "pending", "claimed_at": None, "claim_token": None, "updated_at": sa.column("updated_at")}


def _next_due(state: IndexNowState, bind: Bind, now: datetime, *, drained: bool) -> float | None:
    """The next-due time to cache after a pass; None when a full pass makes it pointless (or it cannot be read).

    A pass that claimed as many rows as it could leaves more due rows behind:
    the next pass comes at once, and the time it would write is "now" anyway.
    Such passes refresh at most every :data:`DUE_REFRESH_EVERY` seconds; a
    pass that drained what was due always does (that is what lets an idle site
    skip the database).
    """
    if not drained and now.timestamp() - state.worker.due_refreshed_at < DUE_REFRESH_EVERY:
        return None
    try:
        return claims.run(bind, lambda connection: due.next_due(state, connection))
    except Exception as exc:
        state.quiet_log.log("due-refresh", logging.WARNING, "IndexNow: could not refresh the next-due time",
                            exc=exc)
        return None


def _sweep_if_due(state: IndexNowState, bind: Bind, now: datetime) -> int:
    """Step 1, only when a claim can have gone stale since the last look.

    After each sweep the process knows the oldest claim still open; no row
    can go stale before that claim does (a claim made later goes stale
    later), so until then a pass makes no query for it. The time is the
    movable clock's, so tests steer it like everything else.
    """
    stamp = now.timestamp()
    if state.worker.next_sweep_at - state.settings.stale_after <= stamp <= state.worker.next_sweep_at:
        return 0  # (a clock set back before the oldest claim looks again)
    return reset_stale(state, bind, now)


def reset_stale(state: IndexNowState, bind: Bind, now: datetime) -> int:
    """Step 1: take rows claimed more than INDEXNOW_STALE_AFTER ago back to ``pending`` (attempts untouched)."""
    stale_after = state.settings.stale_after
    taken = claims.take_back_stale(bind, state.models.queue, now - timedelta(seconds=stale_after), _unclaimed(now))
    if taken.clean:  # the oldest claim left goes stale first: no need to look before then
        state.worker.next_sweep_at = (taken.oldest or now).timestamp() + stale_after
        return 0
    state.worker.next_sweep_at = 0.0  # look again next pass: the claims left are not known yet
    if taken.count:
        logger.warning("IndexNow: %d stale processing rows taken back to pending", taken.count)
    return taken.count


def claim(state: IndexNowState, bind: Bind, limit: int, now: datetime, token: str) -> list[Claimed]:
    """Step 2: atomically mark up to ``limit`` due rows as ours (:func:`claims.claim`); returns them by id."""
    queue = state.models.queue
    c = queue.c
    rows = claims.claim(bind, queue, (c.id, c.host, c.url, c.action, c.attempts, c.fingerprint, c.engine,
                                      c.url_hash, c.updated_at),
                        limit=limit, now=now, token=token)
    rows.sort(key=_row_id)  # batches are id ranges of one host (see setsql.finish_batch)
    return rows


_row_id = operator.itemgetter(0)


def release(
    state: IndexNowState, bind: Bind, token: str, rows: Sequence[Claimed], until: datetime | None
) -> int:
    """Give claimed rows back untouched (no attempt spent), due at ``until`` (None: when they were)."""
    now = clock.utcnow()
    values = _unclaimed(now) if until is None else {**_unclaimed(now), "available_at": until}
    return claims.settle(bind, state.models.queue, token, values, [r.id for r in rows])


def _give_back(state: IndexNowState, bind: Bind, token: str) -> int:
    """Every row still held by ``token`` back to ``pending`` as it was (no attempt spent), in one statement."""
    return claims.settle(bind, state.models.queue, token, _unclaimed(clock.utcnow()))


def _out_of_time(deadline: float | None) -> bool:
    """Too little of the tick's budget is left to start a POST (see :data:`MIN_POST_TIME`)."""
    return deadline is not None and time.monotonic() + MIN_POST_TIME >= deadline


@dataclass
class ClaimHolder:
    """Keeps a running pass's claim alive, so a long pass is not taken for a dead one.

    Rows claimed more than INDEXNOW_STALE_AFTER ago are taken back by any
    worker (step 1 of a pass). A pass of many slow POSTs would lose the rows
    it has not sent yet, and they would be sent twice. So before each POST,
    when that POST could end more than a third of INDEXNOW_STALE_AFTER after
    the claim was last stamped, the pass stamps ``claimed_at`` again on every
    row it still holds: one set-based UPDATE, matched on the claim token.
    (init_app refuses an INDEXNOW_TIMEOUT that is not below INDEXNOW_STALE_AFTER.)
    """

    token: str
    stamped_at: datetime

    def keep(self, state: IndexNowState, bind: Bind) -> None:
        settings = state.settings
        now = clock.utcnow()
        if (now - self.stamped_at).total_seconds() + settings.timeout <= settings.stale_after / 3:
            return
        claims.renew(bind, state.models.queue, self.token, now)
        self.stamped_at = now


def _release_unfinished(state: IndexNowState, engine: sa.Engine, token: str) -> None:
    """Rows still carrying ``token`` go back to ``pending`` as they were (no attempt spent)."""
    try:
        count = _give_back(state, engine, token)
        if count:
            logger.warning("IndexNow: pass interrupted; %d claimed rows given back to pending", count)
    except Exception:
        logger.warning("IndexNow: pass interrupted; its rows return after INDEXNOW_STALE_AFTER", exc_info=True)


def _deliver(
    state: IndexNowState,
    bind: Bind,
    http: requests.Session,
    token: str,
    host: str,
    rows: list[Claimed],
    result: PassResult,
    budget: list[int],
    *,
    deadline: float | None = None,
    holder: ClaimHolder | None = None,
) -> None:
    """POST one batch to its engine and record its outcome; a batch refused with 400/422 is split.

    ``budget`` (shared by every part of one batch) is how many extra requests
    the splitting may still cost. Rows whose turn comes while their engine is
    paused (after a 429, or a 5xx with Retry-After), while its request budget
    for this minute is spent (INDEXNOW_REQUESTS_PER_MINUTE), or once
    ``deadline`` has passed, are released without spending an attempt.
    """
    endpoint = engines.resolve(state, rows[0].engine)
    if endpoint is None:  # its engine was removed from INDEXNOW_ENDPOINTS
        answer = Answer("failed", None, f"engine {rows[0].engine} is no longer configured "
                        "(INDEXNOW_ENDPOINTS): not sent", None, 0.0)
        passlog.no_key(state, host, len(rows), answer.error)
        finish(state, bind, token, rows, answer, result)
        return
    engine = engines.engine(state, endpoint)  # this engine's pause, budget and streaks
    settings = state.settings
    paused_until = endpoint_paused_until(state, engine)
    if paused_until is not None:
        result.released += release(state, bind, token, rows, paused_until)
        return
    if _out_of_time(deadline):
        result.released += release(state, bind, token, rows, None)
        return
    key = key_for(settings, host)
    answered_at: datetime | None = None  # None: finish() takes its own now
    if key is None or key_problem(key):
        answer = Answer("failed", None, f"no valid IndexNow key for host {host}: add it to INDEXNOW_KEYS "
                        "or set INDEXNOW_KEY", None, 0.0)
        passlog.no_key(state, host, len(rows), answer.error)
    elif settings.dry_run:
        answer = Answer("success", None, None, None, 0.0)
        passlog.dry_run(engine, host, [r.url for r in rows])
    else:
        over_budget = take_budget(state, engine)
        if over_budget is not None:  # this minute's POSTs to this engine are spent: wait for the next window
            result.released += release(state, bind, token, rows, over_budget)
            logger.info("IndexNow: host=%s endpoint=%s: %d URLs wait for the next minute "
                        "(INDEXNOW_REQUESTS_PER_MINUTE=%s spent)", host, endpoint, len(rows),
                        settings.requests_per_minute)
            return
        if holder is not None:
            holder.keep(state, bind)
        answer = post_batch(http, settings, host, key, [r.url for r in rows], deadline=deadline, endpoint=endpoint)
        result.requests += 1
        passlog.answer(state, engine, host, len(rows), answer)
        if answer.http_status in (400, 422) and len(rows) > 1 and budget[0] >= 2:
            # Find the URLs the endpoint really refuses: resend each half.
            budget[0] -= 2
            middle = len(rows) // 2
            for half in (rows[:middle], rows[middle:]):
                _deliver(state, bind, http, token, host, half, result, budget, deadline=deadline, holder=holder)
            return
        if pauses_endpoint(answer):
            # One instant for the pause and the refused batch's retry: the pass that
            # comes when the pause ends finds the batch due.
            answered_at = clock.utcnow()
            pause_endpoint(state, engine, answer, now=answered_at)
    finish(state, bind, token, rows, answer, result, endpoint=endpoint, now=answered_at)


def finish(
    state: IndexNowState,
    bind: Bind,
    token: str,
    rows: list[Claimed],
    answer: Answer,
    result: PassResult,
    *,
    endpoint: str | None = None,
    now: datetime | None = None,
) -> None:
    """Step 5 for one batch: queue update, history and ledger in one short transaction.

    Only rows still carrying our claim token are changed. A row that lost its
    claim meanwhile (taken back as stale and claimed by another pass, or reset
    to ``pending`` by a newer event) belongs to someone else: it is neither
    deleted nor failed, and not counted as retried or failed here. Its history
    row still records what this attempt got back, because the POST did happen.
    ``now``: when the answer came (default: now), from which a retry is timed.
    """
    settings = state.settings
    models = state.models
    queue, history = models.queue, models.history
    now = now or clock.utcnow()
    success = answer.outcome == "success"
    engine_key = getattr(rows[0], "engine", engines.DEFAULT_ENGINE)
    endpoint = endpoint or engines.resolve(state, engine_key) or engine_key
    params: dict[str, Any] = {
        "token": token, "host": rows[0].host, "engine": engine_key, "engine_url": endpoint,
        "lo": rows[0].id, "hi": rows[-1].id, "now": now, "http": answer.http_status, "error": answer.error,
    }
    if success:
        params["status"] = "dry_run" if settings.dry_run else "success"
    else:
        params["limit"] = retry.url_attempt_limit(settings, answer.outcome)
        params["retry_at"] = retry.retry_at(settings, answer.retry_after, now)
    retried: list[Claimed] = []
    failed: list[Claimed] = []

    def work(connection: Any) -> None:
        retried.clear()
        failed.clear()
        # The DELETE/UPDATE locks what it changes, so a concurrent event waits for this
        # commit (and then inserts a fresh row or resets this one); one that came first
        # has taken the token away, and its row is left alone.
        # The metrics' delivery totals are counted with the history, in this same transaction.
        owned = finish_batch(connection, queue, history, params, rows, success=success, totals=models.totals)
        if records_changes(state):  # the sitemap's lastmod, whatever the answer: the change did happen
            record_changes(connection, models.url_state, changes_of(rows))
        if success:
            if not settings.dry_run:
                _update_ledger(state, connection, rows, now)
            return
        for row in rows:
            if owned is None or row.id in owned:
                (failed if retry.gives_up(row.attempts + 1, params["limit"]) else retried).append(row)

    claims.run(bind, work)

    app = current_app_object()
    host = rows[0].host
    if answer.outcome == "success":
        if settings.dry_run:
            result.dry_run += len(rows)
        else:
            result.succeeded += len(rows)
        signals.send_signal(signals.batch_sent, app, host=host, urls=[r.url for r in rows], status=answer.http_status,
                    duration=answer.duration, engine=endpoint)
    else:
        result.retried += len(retried)
        result.failed += len(failed)
        for group, permanent in ((retried, False), (failed, True)):
            if group:
                signals.send_signal(signals.delivery_failed, app, host=host, urls=[r.url for r in group],
                            status=answer.http_status, error=answer.error, permanent=permanent,
                            engine=endpoint)


def _update_ledger(state: IndexNowState, connection: Any, rows: list[Claimed], now: datetime) -> None:
    """Remember what was delivered, for fingerprints and resubmit intervals.

    A URL delivered with a fingerprint (or any URL, with INDEXNOW_RESUBMIT_INTERVAL)
    gets its entry written. A URL delivered without one (a delete, or an
    update queued without a fingerprint) has what the engine knows changed in
    a way no fingerprint describes: an entry it already has loses its
    fingerprint, so the next save is sent whatever its content. (Without
    this, a page deleted and then republished unchanged would never be
    submitted again.)
    """
    # With INDEXNOW_VERIFY every delivery is recorded: a page delivered before is withdrawn once it stops being indexable.
    record_all = state.settings.resubmit_interval > 0 or state.settings.verify is not None
    if not (record_all or any(r.fingerprint for r in rows)
            or any(a.fingerprint for a in state.extension.adapters.values())):
        return  # this app keeps no ledger: nothing to record, nothing to clear
    ledger = state.models.url_state
    entries: dict[tuple[str, str], dict[str, Any]] = {
        (r.host, r.url): {
            "host": r.host, "url": r.url, "url_hash": url_hash(r.url),
            "fingerprint": r.fingerprint if r.action == "update" else None, "last_success_at": now,
        }
        for r in rows
    }
    columns: tuple[str, ...] = ("fingerprint", "last_success_at")
    if state.settings.verify is not None:  # a delivered delete withdraws the page (verify/screen.py); an update ends that
        columns += ("withdrawn_at",)
        for r in rows:
            entries[(r.host, r.url)]["withdrawn_at"] = now if r.action == "delete" else None
    written = sorted(
        (e for e in entries.values() if record_all or e["fingerprint"]), key=lambda e: (e["url_hash"], e["host"])
    )
    for chunk in chunks(written, ROWS_PER_STATEMENT):
        upsert(connection, ledger, chunk, keys=("url_hash", "host"), update=columns)
    forgotten = sorted(e["url_hash"] for e in entries.values() if not (record_all or e["fingerprint"]))
    if forgotten and connection.execute(sa.select(ledger.c.id).limit(1)).first() is not None:
        for part in chunks(forgotten, ROWS_PER_STATEMENT):
            connection.execute(
                sa.update(ledger)
                .where(ledger.c.url_hash.in_(part), ledger.c.fingerprint.is_not(None))
                .values(fingerprint=None, last_success_at=now)
            )


def pauses_endpoint(answer: Answer) -> bool:
    """A 429, or a 5xx that says when to come back (Retry-After), pauses every sending to the endpoint."""
    status = answer.http_status
    return status == 429 or (status is not None and 500 <= status < 600 and answer.retry_after is not None)


def pause_endpoint(state: IndexNowState, engine: Engine, answer: Answer, *, now: datetime | None = None) -> None:
    """After a 429 (or a 5xx with Retry-After), stop every process sending to this endpoint until the pause ends.

    The pause ends when the refused batch is due again: INDEXNOW_RETRY_DELAY,
    or the Retry-After when that is longer (capped at a day). It is kept in
    this process and shared with the others through the cache; a per-process
    cache (SimpleCache) or a cache that is down shares it with no one, and the
    log line says so. Only ``engine`` is paused. ``now``: when the answer came (default: now).
    """
    now = now or clock.utcnow()
    ends = retry.retry_at(state.settings, answer.retry_after, now)
    seconds = (ends - now).total_seconds()
    if seconds <= 0:
        return
    # The very instant the refused batch is due (to the microsecond, here and in the
    # cache): a worker woken by the pause's end never finds it still paused or the batch not due.
    until = ends.timestamp()
    status = answer.http_status or 429
    engine.paused = (until, status)
    shared = cache_is_shared(state)
    try:
        state.guarded_cache.set(_pause_key(state, engine), f"{until:.6f}:{status}", timeout=int(seconds) + 1)
    except CacheUnavailable:
        shared = False  # the breaker has logged it; this process still holds the pause
    logger.warning("IndexNow: endpoint %s answered %s; pausing %s sending to it for %.0fs%s", engine.endpoint,
                   status, "all" if shared else "this process's", seconds, "" if shared else _PAUSE_NOT_SHARED)


def endpoint_pause(state: IndexNowState, engine: Engine | None = None) -> tuple[datetime, int] | None:
    """When the endpoint pause ends and which HTTP status asked for it; None when sending is allowed now.

    This process's own pause answers without the cache; otherwise the cache
    says whether another process was asked to pause. ``engine``: whose
    pause; None: the first engine's.
    """
    if engine is None:
        engine = engines.first(state)
    now = clock.utcnow().timestamp()
    pause = engine.paused
    if pause is None or pause[0] <= now:
        try:
            pause = _read_pause(state, state.guarded_cache.get(_pause_key(state, engine)))
        except CacheUnavailable:
            return None
        if pause is None or pause[0] <= now:
            return None
        engine.paused = pause  # another process's pause: no need to ask again until it ends
    return datetime.fromtimestamp(pause[0], tz=timezone.utc), pause[1]


def endpoint_paused_until(state: IndexNowState, engine: Engine | None = None) -> datetime | None:
    """When ``engine``'s pause (None: the first engine's) ends, or None when sending is allowed now."""
    pause = endpoint_pause(state, engine)
    return None if pause is None else pause[0]


def _read_pause(state: IndexNowState, value: Any) -> tuple[float, int] | None:
    """The cached pause: "until:status" (a bare number, as older versions wrote it, is a 429).

    The cache is shared and outlives versions, so what it holds is checked
    like input: a time that is not finite (``inf``, ``nan``, ``1e300``) would
    crash every pass and the status page, and one beyond the longest pause
    this process could have written (:func:`retry.retry_at`'s cap, or
    INDEXNOW_RETRY_DELAY when longer) would stop sending for centuries. Such a
    value is ignored, logged once a minute at most.
    """
    if value is None:
        return None
    try:
        text, _, code = str(value).partition(":")
        until, status = float(text), int(code or 429)
    except ValueError:
        until, status = math.nan, 0
    longest = max(retry.MAX_RETRY_AFTER, state.settings.retry_delay) + _PAUSE_SLACK
    if not (math.isfinite(until) and until <= clock.utcnow().timestamp() + longest and 100 <= status <= 599):
        state.quiet_log.log("pause-unreadable", logging.WARNING,
                            "IndexNow: ignoring an unreadable endpoint pause in the cache: %r", value)
        return None
    return until, status


def _pause_key(state: IndexNowState, engine: Engine) -> str:
    """One pause per endpoint, shared by every process that uses the same cache."""
    return state.cache_key(_PAUSE_KEY + engine.digest)
