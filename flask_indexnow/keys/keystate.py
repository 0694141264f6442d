"""Per-host key state, read from the engine's latest answers.

An engine verifies a key by fetching the key file after a submission. Its
answers tell how far that went: 202 "accepted, key not verified yet", 200
"verified", 403 "the key is not valid for this host". Other answers (429,
5xx, 400 …) say nothing about the key and are passed over, so one overloaded
endpoint does not make a verified host look unknown again.

The hint is worked out without any network request (nothing on the request
path may wait): from what this app itself would serve for that host.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from .. import clock, engines
from ..config import key_problem
from ..refusal import read_refusal
from ..state import IndexNowState
from . import forbidden
from .keyfile import serves_key_file
from .rules import key_for, key_location

KEY_STATES = ("unknown", "pending", "verified", "rejected")
#: The answers that say something about the key, and what they say.
STATE_BY_HTTP_STATUS = {202: "pending", 200: "verified", 403: "rejected"}
#: Hosts listed at most; a site submits for a handful.
MAX_HOSTS = 200


@dataclass(frozen=True)
class HostKeyState:
    host: str
    state: str
    http_status: int | None
    answered_at: datetime | None
    key_location: str | None
    message: str
    hint: str | None
    #: 403 answers in a row for this host (INDEXNOW_FORBIDDEN_ESCALATION), and whether that was escalated.
    forbidden_streak: int = 0
    escalated: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            "host": self.host,
            "state": self.state,
            "http_status": self.http_status,
            "answered_at": None if self.answered_at is None else self.answered_at.isoformat(),
            "key_location": self.key_location,
            "message": self.message,
            "hint": self.hint,
            "forbidden_streak": self.forbidden_streak,
            "escalated": self.escalated,
        }


def known_hosts(state: IndexNowState, connection: Any, extra: Iterable[str] = (), limit: int = MAX_HOSTS) -> list[str]:
    """Hosts the extension has to do with: configured (INDEXNOW_KEYS, and ``extra``), queued (inbox included) or delivered to."""
    models = state.models
    hosts = set(state.settings.keys) | set(extra)
    for table in (models.queue, models.inbox, models.history):  # the inbox: queued, not merged yet
        hosts.update(connection.execute(sa.select(table.c.host).distinct().limit(limit)).scalars())
    return sorted(hosts)[:limit]


def latest_key_answers(state: IndexNowState, connection: Any) -> dict[str, tuple[int, datetime, str | None]]:
    """host → (HTTP status, when, the 403's reason) of the latest answer that speaks about the key.

    The reason (:func:`flask_indexnow.refusal.read_refusal`'s kind, read from the
    stored error text) is None for answers other than 403. A 403 that was
    retried said the engine has not finished verifying the key: the key is pending.
    """
    history = state.models.history
    ranked = (
        sa.select(
            history.c.host, history.c.http_status, history.c.created_at, history.c.status, history.c.error,
            sa.func.row_number().over(
                partition_by=history.c.host, order_by=(history.c.created_at.desc(), history.c.id.desc())
            ).label("rank"),
        )
        .where(history.c.http_status.in_(tuple(STATE_BY_HTTP_STATUS)))
        .subquery()
    )
    query = (sa.select(ranked.c.host, ranked.c.http_status, ranked.c.created_at, ranked.c.status, ranked.c.error)
             .where(ranked.c.rank == 1))
    return {row.host: (int(row.http_status), clock.as_utc(row.created_at), _refusal(row.http_status, row.status,
                                                                                   row.error))
            for row in connection.execute(query)}


def _refusal(http_status: int, status: str, error: str | None) -> str | None:
    if http_status != 403:
        return None
    if status == "retry":
        return "not_verified_yet"
    return read_refusal((error or "").encode()).kind


def host_key_states(state: IndexNowState, connection: Any) -> list[HostKeyState]:
    """The key state of every known host, with the hint that fits."""
    answers = latest_key_answers(state, connection)
    hosts = sorted(set(known_hosts(state, connection)) | set(answers))[:MAX_HOSTS]
    streaks: dict[str, forbidden.Streak] = {}
    for engine in engines.configured(state):  # INDEXNOW_ENDPOINTS: the longest streak of any engine
        for host, streak in forbidden.streaks(state, engine, hosts).items():
            known = streaks.get(host)
            if known is None or (streak.escalated, streak.count) > (known.escalated, known.count):
                streaks[host] = streak
    return [with_streak(describe(state, host, *answers.get(host, (None, None, None))), streaks.get(host))
            for host in hosts]


def with_streak(described: HostKeyState, streak: forbidden.Streak | None) -> HostKeyState:
    """``described`` with its run of 403 answers, said in the message when the key is rejected."""
    if streak is None:
        return described
    message = described.message
    if described.state == "rejected":
        message += f" {streak.count} refusals in a row"
        message += (": escalated (a CRITICAL line was logged); a delivery the engine accepts ends the streak."
                    if streak.escalated else ".")
    return replace(described, message=message, forbidden_streak=streak.count, escalated=streak.escalated)


def describe(state: IndexNowState, host: str, http_status: int | None, at: datetime | None,
             refusal: str | None = None) -> HostKeyState:
    """``host``'s key state from its latest answer about the key (``refusal``: a 403's reason), with its hint."""
    settings = state.settings
    key = key_for(settings, host)
    valid_key = key is not None and key_problem(key) is None
    location = key_location(settings, host, key) if valid_key and key else None
    name = STATE_BY_HTTP_STATUS.get(http_status, "unknown") if http_status is not None else "unknown"
    not_verified_yet = refusal == "not_verified_yet"
    if not_verified_yet:
        name = "pending"
    if not valid_key:
        message = {
            "unknown": "No answer about the key yet.",
            "pending": "The engine accepted URLs but has not verified the key yet.",
            "verified": "The engine verified the key.",
            "rejected": "The engine rejected the key (HTTP 403).",
        }[name]
        hint = (f"Key file missing: there is no valid key for {host}. "
                f"Set INDEXNOW_KEY, or INDEXNOW_KEYS[{host!r}].")
        return HostKeyState(host, name, http_status, at, None, message, hint)
    if name == "verified":
        return HostKeyState(host, name, http_status, at, location, "The engine verified the key.", None)
    if name == "unknown":
        return HostKeyState(
            host, name, http_status, at, location,
            "No answer about the key yet: it is known after the first delivery to this host.", None,
        )
    if name == "pending" and not_verified_yet:
        return HostKeyState(
            host, name, http_status, at, location,
            "The engine has not finished verifying the key (HTTP 403, site verification not completed): "
            "the URLs are retried after INDEXNOW_RETRY_DELAY.",
            f"The engine fetches {location}; make sure it answers exactly the key, to a search engine's crawler "
            "too. This usually clears within hours of a new key going live.",
        )
    if name == "pending":
        return HostKeyState(
            host, name, http_status, at, location,
            "The engine accepted URLs (HTTP 202) and will fetch the key file to verify the key.",
            f"If this stays pending, make sure {location} answers exactly the key, "
            "to a search engine's crawler too.",
        )
    message = {"key_not_found": "The engine rejected the key (HTTP 403): it did not find the key.",
               "site_forbidden": "The engine rejected the key (HTTP 403): it has not accepted this key for this host.",
               }.get(refusal or "", "The engine rejected the key (HTTP 403).")
    hint = rejected_hint(state, host, location or "")
    if refusal == "site_forbidden":
        hint = ("The engine has not accepted this key as the key of this host (UserForbiddedToAccessSite): "
                "a key verified for another site does not count, and after a key change the old key must stay "
                "served (INDEXNOW_PREVIOUS_KEYS) until the engine has checked the new one. " + hint)
    return HostKeyState(host, name, http_status, at, location, message, hint)


def rejected_hint(state: IndexNowState, host: str, location: str) -> str:
    """Why an engine may have refused the key, judged from this app's own set-up."""
    if not serves_key_file(state):
        return (f"Key file missing or wrong content: {location} is served outside this app "
                "(INDEXNOW_KEY_LOCATION); make sure it exists and holds exactly the key, nothing else.")
    return (f"This app serves {location} with the right key, so the engine could not read it: "
            "check that no firewall, CDN or bot protection blocks or redirects it (blocked), that "
            "another server does not answer that path first (missing), and that the key was not "
            "changed since (wrong content). `flask indexnow key check` fetches it the way an engine does.")
