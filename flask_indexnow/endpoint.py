"""Talking to the IndexNow endpoint: checks, the POST, and what an answer means (SPEC §4)."""

from __future__ import annotations

import email.utils
import re
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlsplit

import requests

from . import clock
from .config import Settings, key_problem
from .errors import InvalidURLError
from .urls import check_host

#: The protocol's limit of URLs in one request.
MAX_URLS_PER_REQUEST = 10_000
#: Retry-After values beyond this are treated as this (a day), so a bad header
#: cannot park a row for years.
MAX_RETRY_AFTER = 86_400
_ERROR_TEXT_MAX = 500
#: Bytes of an error answer's body read for the error text: a huge body is never downloaded.
_BODY_READ_MAX = 4096
_SECONDS_RE = re.compile(r"^[0-9]+$")
#: Control characters (NUL among them: PostgreSQL refuses it in text) become spaces in stored errors.
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f]+")


def endpoint_problem(settings: Settings) -> str | None:
    """Why the configured endpoint may not be used, or None when it may."""
    endpoint = settings.endpoint
    if not endpoint:
        return "INDEXNOW_ENDPOINT is not set"
    try:
        parts = urlsplit(endpoint)
        parts.port
    except ValueError:
        return f"INDEXNOW_ENDPOINT {endpoint!r} is not a valid URL"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"INDEXNOW_ENDPOINT {endpoint!r} is not an absolute http(s) URL"
    if parts.username or parts.password:
        return "INDEXNOW_ENDPOINT must not carry a user name or password"
    if settings.allow_private_endpoint:
        return None
    if parts.scheme != "https":
        return "INDEXNOW_ENDPOINT must use https (set INDEXNOW_ALLOW_PRIVATE_ENDPOINT for a local sandbox)"
    try:
        check_host(f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname)
    except InvalidURLError as exc:
        return f"INDEXNOW_ENDPOINT is not a public host ({exc}); set INDEXNOW_ALLOW_PRIVATE_ENDPOINT for a local sandbox"
    return None


def sending_problem(settings: Settings) -> str | None:
    """Why a worker pass must not send anything, or None."""
    if not settings.enabled:
        return "INDEXNOW_ENABLED is False"
    if settings.keys and settings.key is None:
        problem = None  # every host may have its own key; hosts without one are refused per batch
    else:
        problem = key_problem(settings.key)
    return problem or endpoint_problem(settings)


def key_for(settings: Settings, host: str) -> str | None:
    """The key a batch for ``host`` carries: INDEXNOW_KEYS first, then INDEXNOW_KEY."""
    return settings.keys.get(host) or settings.key


def key_location(settings: Settings, host: str, key: str) -> str:
    template = settings.key_location or "https://{host}/{key}.txt"
    return template.replace("{host}", host).replace("{key}", key)


@dataclass(frozen=True)
class Answer:
    """What one POST came back with, already judged."""

    outcome: str  # "success" | "retry" | "failed"
    http_status: int | None
    error: str | None
    retry_after: float | None
    duration: float


def classify(status: int) -> str:
    """SPEC §4: 2xx success; 429 and 5xx temporary; every other answer permanent."""
    if 200 <= status < 300:
        return "success"
    if status == 429 or 500 <= status < 600:
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
    if _SECONDS_RE.match(value):  # ASCII digits only: str.isdigit() also takes "²"
        seconds = float(value)
    else:
        try:
            when = email.utils.parsedate_to_datetime(value)
            seconds = (clock.as_utc(when) - (now or clock.utcnow())).total_seconds()
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
    return max(0.0, min(seconds, MAX_RETRY_AFTER))


def post_batch(
    http: requests.Session, settings: Settings, host: str, key: str, urls: list[str], *,
    deadline: float | None = None,
) -> Answer:
    """POST one batch; never raises for what the network or the endpoint does.

    ``deadline`` (a :func:`time.monotonic` instant) cuts the timeout short so
    that the request ends by then (the tick's budget).
    """
    body = {"host": host, "key": key, "keyLocation": key_location(settings, host, key), "urlList": urls}
    started = time.perf_counter()
    timeout = settings.timeout
    if deadline is not None:
        timeout = max(0.001, min(timeout, deadline - time.monotonic()))
    try:
        # stream=True: the body is read only for an error text, and only its start.
        with http.post(
            settings.endpoint,
            json=body,
            timeout=timeout,
            allow_redirects=False,
            stream=True,
            headers={"Content-Type": "application/json; charset=utf-8"},
        ) as response:
            status = response.status_code
            outcome = classify(status)
            retry_after = parse_retry_after(response.headers.get("Retry-After")) if outcome == "retry" else None
            error = None
            if 300 <= status < 400:
                error = _short(f"HTTP {status} redirect to {response.headers.get('Location', '?')} (not followed)")
            elif outcome != "success":
                error = _short(f"HTTP {status}: {_body_excerpt(response)}")
    except requests.Timeout:
        error = (f"timeout after {settings.timeout:g}s" if timeout >= settings.timeout
                 else f"no answer within the tick budget ({timeout:.2f}s)")
        return Answer("retry", None, error, None, time.perf_counter() - started)
    except requests.RequestException as exc:
        return Answer("retry", None, _short(f"network error: {exc.__class__.__name__}: {exc}"), None,
                      time.perf_counter() - started)
    return Answer(outcome, status, error, retry_after, time.perf_counter() - started)


def _body_excerpt(response: requests.Response) -> str:
    """The start of an error answer's body as one line of text (the reason phrase if empty)."""
    try:
        raw = response.raw.read(_BODY_READ_MAX, decode_content=True) or b""
    except Exception:  # a broken or undecodable body must not hide the status
        raw = b""
    text = raw[:300].decode("utf-8", "replace")
    return " ".join(_CONTROL_RE.sub(" ", text).split()) or response.reason or ""


def _short(text: str) -> str:
    """Error texts as stored: one line, no control characters, at most 500 characters."""
    text = " ".join(_CONTROL_RE.sub(" ", text).split())
    return text if len(text) <= _ERROR_TEXT_MAX else text[: _ERROR_TEXT_MAX - 1] + "…"


def retry_at(settings: Settings, answer: Answer, now: datetime) -> datetime:
    delay = settings.retry_delay
    if answer.retry_after is not None and answer.retry_after > delay:
        delay = answer.retry_after
    return now + timedelta(seconds=delay)


def new_http_session() -> requests.Session:
    session = requests.Session()
    session.headers["User-Agent"] = "flask-indexnow"
    return session

