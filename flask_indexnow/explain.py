"""The story of one URL: ``flask indexnow explain URL`` (issue 13 §4).

Everything the extension knows about a URL, from the few places that hold
it: the rules that accept or refuse it, its queue row, its delivery history,
the fingerprint ledger and the resubmit interval, and an endpoint pause.
:func:`explain_url` reads it with a handful of indexed queries (no write, no
network) and returns plain data; the command prints it, or its JSON.
Remote text (an engine's answers) is made safe to print on the way out.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from . import clock, engines, inbox
from .config import MAX_ENDPOINTS
from .delivery import budget
from .delivery.worker import endpoint_pause, endpoint_paused_until
from .errors import InvalidURLError
from .models import url_hash
from .queue import make_entry
from .safetext import safe_text
from .state import IndexNowState
from .status.display import duration
from .urls import check_url

#: History rows shown, newest first.
HISTORY_LIMIT = 20
#: Characters of a stored error shown.
ERROR_CHARS = 500


@dataclass
class Explanation:
    """What :func:`explain_url` found. Times are aware UTC datetimes; :meth:`as_dict` makes them ISO text."""

    url: str
    normalized: str | None
    host: str | None
    accepted: bool
    refused_because: str | None
    queue: dict[str, Any] | None
    history: list[dict[str, Any]] = field(default_factory=list)
    history_total: int = 0
    ledger: dict[str, Any] | None = None
    resubmit_held_until: datetime | None = None
    endpoint_paused_until: datetime | None = None
    #: Each configured engine: its own queue row (None: none open), its pause and its request budget.
    engines: list[dict[str, Any]] = field(default_factory=list)
    #: Events for the URL queued inside the site's transactions, not merged into the queue yet (oldest first).
    inbox: list[dict[str, Any]] = field(default_factory=list)
    story: list[str] = field(default_factory=list)

    @property
    def known(self) -> bool:
        """True when the URL has a queue row, an inbox event, history or a ledger entry."""
        return self.queue is not None or bool(self.inbox) or self.history_total > 0 or self.ledger is not None

    def as_dict(self) -> dict[str, Any]:
        data = _jsonable(asdict(self))
        data["known"] = self.known
        return data  # type: ignore[no-any-return]


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return clock.as_utc(value).isoformat()
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


def _normalise(state: IndexNowState, url: str) -> tuple[str | None, str | None, bool, str | None]:
    """(normalised URL, host, accepted now, why refused): the enqueue rules, nothing written."""
    try:
        entry = make_entry(state, url)
    except InvalidURLError as exc:
        refused = str(exc)
        try:  # a URL refused by the allow-list still has a form it may be stored under
            checked = check_url(url, strip=state.settings.strip_query_params)
        except InvalidURLError:
            return None, None, False, refused
        return checked.url, checked.host, False, refused
    if not state.settings.enabled:
        return entry.url, entry.host, False, "INDEXNOW_ENABLED is False: nothing is queued"
    return entry.url, entry.host, True, None


def explain_url(state: IndexNowState, url: str) -> Explanation:
    """Everything known about ``url`` now. Needs an app context (for the database)."""
    now = clock.utcnow()
    normalized, host, accepted, refused = _normalise(state, url)
    stored_url = normalized or (url.strip() if isinstance(url, str) else str(url))
    digest = url_hash(stored_url)
    models = state.models
    queue, history, ledger = models.queue, models.history, models.url_state
    where_host = [] if host is None else [queue.c.host == host]
    with state.engine().connect() as connection:
        queued = list(connection.execute(
            sa.select(queue).where(queue.c.url_hash == digest, queue.c.url == stored_url, *where_host)
            .order_by(queue.c.id).limit(1 + MAX_ENDPOINTS)
        ))
        row = queued[0] if queued else None
        host = host or (row.host if row is not None else None)
        history_filter = [history.c.url == stored_url] + ([history.c.host == host] if host else [])
        answers = list(connection.execute(
            sa.select(history)
            .where(*history_filter)
            .order_by(history.c.created_at.desc(), history.c.id.desc())
            .limit(HISTORY_LIMIT)
        ))
        total = int(connection.execute(sa.select(sa.func.count()).select_from(history).where(*history_filter))
                    .scalar_one()) if answers else 0
        ledger_filter = [ledger.c.url_hash == digest, ledger.c.url == stored_url] + (
            [ledger.c.host == host] if host else [])
        # The columns shown, not the whole row: the sitemap's changed_at may await its migration.
        shown = (ledger.c.fingerprint, ledger.c.last_success_at, ledger.c.verdict, ledger.c.verified_at,
                 ledger.c.withdrawn_at)
        entry = connection.execute(sa.select(*shown).where(*ledger_filter).limit(1)).first()
        waiting = [] if host is None else inbox.events_for(state, connection, host, stored_url)

    explanation = Explanation(
        url=url, normalized=normalized, host=host, accepted=accepted, refused_because=refused,
        queue=None if row is None else _queue_dict(state, row, now),
        history=[_history_dict(a) for a in answers], history_total=total,
        ledger=None if entry is None else {
            "fingerprint": entry.fingerprint,
            "last_success_at": None if entry.last_success_at is None else clock.as_utc(entry.last_success_at),
            # INDEXNOW_VERIFY: the last verdict, when it was made, when a delete last withdrew the page.
            "verdict": entry.verdict,
            "verified_at": None if entry.verified_at is None else clock.as_utc(entry.verified_at),
            "withdrawn_at": None if entry.withdrawn_at is None else clock.as_utc(entry.withdrawn_at),
        },
    )
    interval = state.settings.resubmit_interval
    if interval > 0 and entry is not None and entry.last_success_at is not None:
        until = clock.as_utc(entry.last_success_at) + timedelta(seconds=interval)
        explanation.resubmit_held_until = until if until > now else None

    explanation.inbox = [{"action": e.action, "available_at": clock.as_utc(e.available_at),
                          "queued_at": clock.as_utc(e.created_at)} for e in waiting]
    explanation.endpoint_paused_until = endpoint_paused_until(state)
    explanation.engines = _engines(state, queued, now)
    explanation.story = _story(state, explanation, now)
    return explanation


def _engines(state: IndexNowState, queued: list[Any], now: datetime) -> list[dict[str, Any]]:
    """Per engine: the URL's own row for it, the engine's pause and its request budget."""
    rows = {engines.resolve(state, row.engine): row for row in queued}
    listed = []
    for engine in engines.configured(state):
        pause = endpoint_pause(state, engine)
        usage = budget.usage(state, engine)
        row = rows.get(engine.endpoint)
        listed.append({
            "engine": engine.endpoint,
            "queue": None if row is None else _queue_dict(state, row, now),
            "paused_until": None if pause is None else pause[0],
            "budget": None if usage is None else {"used": usage.used, "limit": usage.limit,
                                                  "window_ends": usage.window_ends},
        })
    return listed


def _queue_dict(state: IndexNowState, row: Any, now: datetime) -> dict[str, Any]:
    available_at = clock.as_utc(row.available_at)
    claimed_at = None if row.claimed_at is None else clock.as_utc(row.claimed_at)
    return {
        "engine": row.engine,
        "status": row.status,
        "action": row.action,
        "attempts": int(row.attempts),
        "max_attempts": state.settings.max_attempts,
        "available_at": available_at,
        "due_now": row.status == "pending" and available_at <= now,
        "claimed_at": claimed_at,
        "stale_at": None if claimed_at is None else claimed_at + timedelta(seconds=state.settings.stale_after),
        "fingerprint": row.fingerprint,
        "last_error": None if row.last_error is None else safe_text(row.last_error, ERROR_CHARS),
        "last_http_status": row.last_http_status,
        "created_at": clock.as_utc(row.created_at),
        "updated_at": clock.as_utc(row.updated_at),
    }


def _history_dict(row: Any) -> dict[str, Any]:
    return {
        "at": clock.as_utc(row.created_at),
        "action": row.action,
        "status": row.status,
        "http_status": row.http_status,
        "attempt": int(row.attempts),
        "engine": row.engine,
        "error": None if row.error is None else safe_text(row.error, ERROR_CHARS),
    }


def _when(value: datetime, now: datetime) -> str:
    seconds = (value - now).total_seconds()
    text = f"{value:%Y-%m-%d %H:%M:%S} UTC"
    if abs(seconds) < 1:
        return text + " (now)"
    return text + (f" (in {_span(seconds)})" if seconds > 0 else f" ({_span(-seconds)} ago)")


def _span(seconds: float) -> str:
    return duration(seconds)


def _story(state: IndexNowState, e: Explanation, now: datetime) -> list[str]:
    """The findings as sentences, in the order a person asks them."""
    lines = []
    if e.accepted:
        lines.append(f"Accepted now: it would be queued as {e.normalized} (host {e.host}).")
    else:
        lines.append(f"Refused now: {e.refused_because}.")
    q = e.queue
    if q is None:
        lines.append("Queue: no row (never queued, or delivered and removed).")
    else:
        text = f"Queue: {q['action']} {q['status']}, {q['attempts']} of {q['max_attempts']} attempts spent"
        if q["status"] == "pending":
            text += "; due now" if q["due_now"] else f"; next attempt {_when(q['available_at'], now)}"
        elif q["status"] == "processing" and q["claimed_at"] is not None:
            text += (f"; claimed {_when(q['claimed_at'], now)}, taken back if still claimed at "
                     f"{_when(q['stale_at'], now)}")
        elif q["status"] == "failed":
            text += "; waits for `flask indexnow retry-failed` or a new change"
        if q["last_http_status"] is not None or q["last_error"]:
            text += f"; last answer: {q['last_error'] or 'HTTP ' + str(q['last_http_status'])}"
        lines.append(text + ".")
    if e.inbox:
        last = e.inbox[-1]
        lines.append(f"Inbox: {len(e.inbox)} event(s) saved in the site's transactions, the latest "
                     f"{last['action']} {_when(last['queued_at'], now)}; the next pass merges them into the queue.")
    if e.history_total:
        lines.append(f"History: {e.history_total} answer(s)"
                     + (f", the latest {len(e.history)} below" if e.history_total > len(e.history) else "") + ".")
    else:
        lines.append("History: no delivery attempt recorded.")
    if e.ledger is None:
        lines.append("Ledger: no entry (no fingerprint or resubmit interval recorded a delivery).")
    else:
        at = e.ledger["last_success_at"]
        lines.append(f"Ledger: fingerprint {e.ledger['fingerprint'] or '(none)'}, last delivered "
                     f"{_when(at, now) if at else 'never'}.")
    if e.ledger is not None and e.ledger["verdict"]:
        text = f"Last verdict ({_when(e.ledger['verified_at'], now)}): {e.ledger['verdict']}"
        if e.ledger["withdrawn_at"] is not None:
            text += f"; withdrawn with a delete {_when(e.ledger['withdrawn_at'], now)}"
        lines.append(text + ".")
    elif state.settings.verify:
        lines.append("Last verdict: not verified yet (INDEXNOW_VERIFY asks for the page before it is sent).")
    if e.resubmit_held_until is not None:
        lines.append(f"Resubmit interval: an update queued now waits until {_when(e.resubmit_held_until, now)} "
                     f"(INDEXNOW_RESUBMIT_INTERVAL = {state.settings.resubmit_interval:g}s).")
    elif state.settings.resubmit_interval > 0:
        lines.append("Resubmit interval: holds nothing back now.")
    if len(e.engines) > 1:  # INDEXNOW_ENDPOINTS: each engine's own row, pause and budget
        for engine in e.engines:
            eq = engine["queue"]
            text = f"Engine {engine['engine']}: "
            if eq is None:
                text += "no row"
            else:
                text += f"{eq['status']}, {eq['attempts']} attempt(s)"
                if eq["status"] == "pending" and not eq["due_now"]:
                    text += f", next {_when(eq['available_at'], now)}"
                if eq["last_error"]:
                    text += f", last answer: {eq['last_error']}"
            if engine["paused_until"] is not None:
                text += f"; paused until {_when(engine['paused_until'], now)}"
            if engine["budget"] is not None:
                text += f"; budget {engine['budget']['used']}/{engine['budget']['limit']} this minute"
            lines.append(text + ".")
    elif e.endpoint_paused_until is not None:
        lines.append(f"Endpoint: paused until {_when(e.endpoint_paused_until, now)}; nothing is sent before.")
    if len(e.engines) == 1 and e.engines[0]["budget"] is not None:
        b = e.engines[0]["budget"]
        lines.append(f"Request budget: {b['used']} of {b['limit']} POSTs used this minute "
                     f"(INDEXNOW_REQUESTS_PER_MINUTE); the next window opens {_when(b['window_ends'], now)}.")
    return lines
