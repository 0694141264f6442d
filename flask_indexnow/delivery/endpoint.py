"""Talking to the IndexNow endpoint: checks, the POST, and what an answer means."""

from __future__ import annotations

import time
from dataclasses import dataclass
from http.client import HTTPException
from urllib.parse import urlsplit

import requests
import urllib3

from .. import outbound
from ..config import Settings, key_problem
from ..errors import InvalidURLError
from ..keys.rules import key_location
from ..outbound import new_http_session as new_http_session  # where it lived before outbound.py
from ..refusal import read_refusal
from ..retry import classify, parse_retry_after
from ..safetext import safe_text
from ..urls import check_host

#: The protocol's limit of URLs in one request.
MAX_URLS_PER_REQUEST = 10_000
_ERROR_TEXT_MAX = 500
#: Bytes of an error answer's body read for the error text: a huge body is never downloaded.
_BODY_READ_MAX = 4096


def endpoint_problem(settings: Settings, endpoint: str | None = None) -> str | None:
    """Why ``endpoint`` (by default the configured INDEXNOW_ENDPOINT) may not be used, or None when it may."""
    if endpoint is None:
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
    return problem or endpoints_problem(settings)


def endpoints_problem(settings: Settings) -> str | None:
    """Why one of the configured engines may not be used (INDEXNOW_ENDPOINTS: each checked alike), or None."""
    if not settings.endpoints:
        return endpoint_problem(settings)
    for endpoint in settings.endpoints:
        problem = endpoint_problem(settings, endpoint)
        if problem:
            return problem.replace("INDEXNOW_ENDPOINT ", "INDEXNOW_ENDPOINTS: ", 1)
    return None


@dataclass(frozen=True)
class Answer:
    """What one POST came back with, already judged."""

    outcome: str  # "success" | "retry" | "failed"
    http_status: int | None
    error: str | None
    retry_after: float | None
    duration: float
    #: A 403's reason (:func:`flask_indexnow.refusal.read_refusal`'s kind), None for every other answer.
    refusal: str | None = None


def post_batch(
    http: requests.Session,
    settings: Settings,
    host: str,
    key: str,
    urls: list[str],
    *,
    deadline: float | None = None,
    endpoint: str | None = None,
) -> Answer:
    """POST one batch to ``endpoint`` (default: ``settings.endpoint``); never raises for what the network or
    the endpoint does.

    The whole request (connect, send, status line, headers, body) ends by
    ``now + settings.timeout`` or ``deadline`` (a :func:`time.monotonic`
    instant), whichever comes first, however slowly the endpoint answers.
    A short body is read to its end so the connection is kept alive.
    """
    body = {"host": host, "key": key, "keyLocation": key_location(settings, host, key), "urlList": urls}
    started = time.perf_counter()
    limit = time.monotonic() + settings.timeout
    budget = settings.timeout
    timeout_text = f"timeout after {budget:g}s"
    if deadline is not None and deadline < limit:
        limit = deadline
        budget = max(0.0, deadline - time.monotonic())  # exact: a rounded-down timeout ends before the deadline
        timeout_text = f"no answer within the tick budget ({round(budget, 1):g}s)"
    with outbound.scope(limit, allow_private=settings.allow_private_endpoint) as rules:
        try:
            if budget <= 0:
                raise requests.Timeout("no time left")
            # stream=True: the body is read here, bounded, never downloaded whole.
            with http.post(
                endpoint or settings.endpoint,
                json=body,
                timeout=budget,
                allow_redirects=False,
                stream=True,
                headers={"Content-Type": "application/json; charset=utf-8"},
            ) as response:
                if rules.expired:  # the watchdog cut the answer's head: what came is not the answer
                    raise requests.Timeout("deadline")
                status = response.status_code
                # The status stands even if the deadline cuts the body short: the engine has answered.
                raw = _read_short_body(response)
                outcome = classify(status, raw)  # a 403's body may say "not verified yet": temporary
                refusal = read_refusal(raw).kind if status == 403 else None
                retry_after = (parse_retry_after(response.headers.get("Retry-After"))
                               if outcome == "retry" and status != 403 else None)
                error = None
                if 300 <= status < 400:
                    error = _short(f"HTTP {status} redirect to {response.headers.get('Location', '?')} (not followed)")
                elif outcome != "success":
                    error = _short(f"HTTP {status}: {_excerpt(raw) or response.reason or ''}")
        except (requests.RequestException, OSError, urllib3.exceptions.HTTPError, HTTPException) as exc:
            if rules.expired or isinstance(exc, (requests.Timeout, TimeoutError)):
                return Answer("retry", None, timeout_text, None, time.perf_counter() - started)
            return Answer("retry", None, _short(f"network error: {exc.__class__.__name__}: {exc}"), None,
                          time.perf_counter() - started)
        except outbound.RefusedAddressError as exc:
            return Answer("retry", None, _short(f"network error: {exc}"), None, time.perf_counter() - started)
    return Answer(outcome, status, error, retry_after, time.perf_counter() - started, refusal)


def _read_short_body(response: requests.Response) -> bytes:
    """The body, when it is short: read to its end so the connection goes back to the pool.

    At most :data:`_BODY_READ_MAX` bytes are read; a longer body is not
    downloaded: the connection is closed instead (by the response's close).
    (urllib3 hands a connection back to its pool when its body has been read
    to the end, which is what keep-alive needs.)
    A broken or undecodable body gives b"" (it must not hide the status).
    """
    if response.request.method == "HEAD" or response.status_code in (204, 304):
        return b""
    try:
        raw = response.raw.read(_BODY_READ_MAX + 1, decode_content=True) or b""
    except (urllib3.exceptions.HTTPError, OSError, HTTPException):
        return b""
    return raw[:_BODY_READ_MAX]


def _excerpt(raw: bytes) -> str:
    """The start of an error answer's body as one line of text."""
    return safe_text(raw[:300].decode("utf-8", "replace"))


def _short(text: str) -> str:
    """Error texts as stored: one line, no control characters, at most 500 characters."""
    text = safe_text(text)
    return text if len(text) <= _ERROR_TEXT_MAX else text[: _ERROR_TEXT_MAX - 1] + "…"

