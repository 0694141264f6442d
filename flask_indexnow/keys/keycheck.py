"""``flask indexnow key check``: fetch each host's key file the way an engine would.

An engine that receives a submission GETs the ``keyLocation`` and accepts the
key only when that request answers 200 with the key itself. Engines do not
follow redirects for it, so a redirect (``http`` → ``https``, bare → ``www``)
is reported as a problem too. The check tolerates what engines tolerate in
practice: a UTF-8 byte order mark and whitespace around the key (a trailing
newline from an editor); any other difference is "wrong content".

No database transaction is open while fetching: the hosts are read first.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.client import HTTPException
from urllib.parse import urlsplit

import requests
import urllib3

from .. import outbound
from ..config import key_problem
from ..errors import InvalidURLError
from ..outbound import new_http_session
from ..safetext import safe_text
from ..state import IndexNowState
from ..urls import check_url
from . import keystate
from .rules import key_for, key_location

#: Bytes of a key file read at most: a key is 8-128 characters.
MAX_BODY = 4096
#: Hosts the default list (queue, history, settings) holds at most.
MAX_HOSTS = 1000
_HOST_RE = re.compile(r"(\[[0-9a-f:.%]+\]|[a-z0-9_.-]+)(:\d{1,5})?")
_REDIRECTS = (301, 302, 303, 307, 308)


@dataclass(frozen=True)
class KeyProblem:
    """One thing wrong with a host's key file, with what to do about it."""

    code: str  # "missing" | "wrong_content" | "wrong_content_type" | "redirect" | "blocked" | "http_error"
    #          # | "unreachable" | "refused" | "no_key" | "invalid_host"
    message: str
    fix: str


@dataclass(frozen=True)
class KeyCheckResult:
    """The verdict for one host: ``ok`` when an engine would accept its key file."""

    host: str
    url: str | None
    http_status: int | None = None
    problems: list[KeyProblem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def hosts_to_check(state: IndexNowState) -> list[str]:
    """Hosts worth checking: the known hosts (:func:`keystate.known_hosts`) and INDEXNOW_ALLOWED_HOSTS."""
    with state.engine().connect() as connection:
        return keystate.known_hosts(state, connection, state.settings.allowed_hosts or (), MAX_HOSTS)


def normalise_host(text: str) -> str:
    """``example.com``, ``Example.COM.``, ``https://example.com/`` → ``example.com`` (a port is kept)."""
    text = text.strip()
    if "://" in text:
        text = urlsplit(text).netloc
    host = text.lower().rstrip(".")
    if not _HOST_RE.fullmatch(host):
        raise InvalidURLError(f"{text!r} is not a host name")
    return host


def check_key_files(
    state: IndexNowState,
    hosts: Iterable[str] | None = None,
    *,
    http: requests.Session | None = None,
    allow_private: bool | None = None,
) -> list[KeyCheckResult]:
    """Fetch the key file of each host (default: :func:`hosts_to_check`) and judge it.

    Private and loopback hosts, and names that resolve to such addresses, are
    refused unless ``allow_private`` is true (default:
    INDEXNOW_ALLOW_PRIVATE_ENDPOINT, as for the endpoint itself). Each fetch
    ends within INDEXNOW_TIMEOUT however slowly the host answers. Never raises
    for what a host answers; every server text in a result is made safe to
    print (:func:`~flask_indexnow.safetext.safe_text`).
    """
    names = hosts_to_check(state) if hosts is None else list(dict.fromkeys(hosts))
    private = state.settings.allow_private_endpoint if allow_private is None else allow_private
    session = http or new_http_session()
    try:
        return [check_key_file(state, name, session, allow_private=private) for name in names]
    finally:
        if http is None:
            session.close()


def check_key_file(
    state: IndexNowState, host: str, http: requests.Session, *, allow_private: bool | None = None
) -> KeyCheckResult:
    settings = state.settings
    if allow_private is None:
        allow_private = settings.allow_private_endpoint
    try:
        host = normalise_host(host)
    except InvalidURLError as exc:
        return KeyCheckResult(host, None, problems=[KeyProblem("invalid_host", str(exc), "Pass a host name such as example.com.")])
    key = key_for(settings, _without_port(host))
    if key is None or key_problem(key):
        return KeyCheckResult(host, None, problems=[KeyProblem(
            "no_key", f"no valid key for {host}",
            "Set INDEXNOW_KEY (run `flask indexnow key generate`) or INDEXNOW_KEYS[host].",
        )])
    url = key_location(settings, host, key)
    if not allow_private:
        try:
            check_url(url)
        except InvalidURLError as exc:
            return _refused(host, url, str(exc))
    with outbound.scope(time.monotonic() + settings.timeout, allow_private=allow_private) as rules:
        try:
            return _judge(url, key, http, settings.timeout, host, rules)
        except outbound.RefusedAddressError as exc:
            return _refused(host, url, str(exc))


def _refused(host: str, url: str, reason: str) -> KeyCheckResult:
    return KeyCheckResult(host, url, problems=[KeyProblem(
        "refused", f"not fetched: {safe_text(reason)}",
        "Only public hosts are checked; pass --allow-private-hosts (or set INDEXNOW_ALLOW_PRIVATE_ENDPOINT) "
        "for a local sandbox.",
    )])


def _judge(
    url: str, key: str, http: requests.Session, timeout: float, host: str, rules: outbound.Scope
) -> KeyCheckResult:
    try:
        response = http.get(url, timeout=timeout, allow_redirects=False, stream=True)
    except (requests.RequestException, OSError) as exc:
        if rules.expired or isinstance(exc, (requests.Timeout, TimeoutError)):
            return _unreachable(host, url, f"no answer within {timeout:g}s")
        return _unreachable(host, url, f"cannot connect ({exc.__class__.__name__})")
    with response:
        if rules.expired:  # the watchdog cut the answer's head: what came is not the answer
            return _unreachable(host, url, f"no answer within {timeout:g}s")
        status = response.status_code
        if status in _REDIRECTS:
            target = safe_text(response.headers.get("Location", "?"))
            return KeyCheckResult(host, url, status, [KeyProblem(
                "redirect", f"HTTP {status} redirect to {target}; engines do not follow it",
                f"Serve the key file at {url} itself, without a redirect (http→https and www redirects count).",
            )])
        if status == 404:
            return KeyCheckResult(host, url, status, [KeyProblem(
                "missing", "key file missing (HTTP 404)",
                f"Serve a text file at {url} holding just the key (the extension serves /<key>.txt itself "
                "when INDEXNOW_KEY_LOCATION is unset; check that this host reaches the app).",
            )])
        if status in (401, 403):
            return KeyCheckResult(host, url, status, [KeyProblem(
                "blocked", f"key file blocked (HTTP {status})",
                "Let anonymous clients and crawlers fetch the key file (firewall, login, bot protection).",
            )])
        if status != 200:
            return KeyCheckResult(host, url, status, [KeyProblem(
                "http_error", f"HTTP {status} for the key file", f"Make {url} answer 200 with the key.",
            )])
        try:
            body = _read_capped(response)
        except (requests.RequestException, urllib3.exceptions.HTTPError, OSError, HTTPException) as exc:
            if rules.expired:
                return _unreachable(host, url, f"the key file did not arrive within {timeout:g}s")
            return _unreachable(host, url, f"the connection failed while reading ({exc.__class__.__name__})")
        if rules.expired:  # the watchdog cut the body short: what came is not the file
            return _unreachable(host, url, f"the key file did not arrive within {timeout:g}s")
        problems = []
        content_type = safe_text(response.headers.get("Content-Type", ""))
        if content_type.split(";")[0].strip().lower() != "text/plain":
            problems.append(KeyProblem(
                "wrong_content_type", f"served as {content_type or 'no content type'!r}, not text/plain",
                "Serve the key file with Content-Type: text/plain; charset=utf-8.",
            ))
        served = _served_key(body)
        if served != key:
            shown = repr(safe_text(served)[:60]) if served is not None else "bytes that are not UTF-8 text"
            problems.append(KeyProblem(
                "wrong_content", f"wrong content: expected the key {key!r}, got {shown}",
                "The file must hold the key alone, exactly as configured (INDEXNOW_KEY / INDEXNOW_KEYS).",
            ))
        return KeyCheckResult(host, url, status, problems)


def _without_port(host: str) -> str:
    if host.startswith("["):
        return host[: host.index("]") + 1]
    return host.split(":", 1)[0]


def _read_capped(response: requests.Response) -> bytes:
    body = b""
    for chunk in response.iter_content(1024):
        body += chunk
        if len(body) > MAX_BODY:
            break
    return body[: MAX_BODY + 1]


def _served_key(body: bytes) -> str | None:
    """The key as an engine reads it: UTF-8, without a BOM and surrounding whitespace."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text.removeprefix("\ufeff").strip()


def _unreachable(host: str, url: str, detail: str) -> KeyCheckResult:
    return KeyCheckResult(host, url, None, [KeyProblem(
        "unreachable", f"unreachable: {detail}",
        f"Make sure {url} can be reached from the internet (DNS, firewall, TLS certificate).",
    )])
