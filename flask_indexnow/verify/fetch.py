"""Asking for a page: from the application itself (``"app"``) or with a real GET (``"http"``).

``"app"`` calls the app's WSGI callable in this process: the URL's scheme,
host, path and query, ``User-Agent: Flask-IndexNow-Verify/<version>``, the
environ key ``indexnow.verify`` set, no cookies. No network is used. The call
runs in an application context of its own, so the view's database session is
its own and is removed when it ends (no transaction of the view outlives it,
and the caller's session is never touched).

``"http"`` makes a real GET under the outbound rules of every other request
(:mod:`flask_indexnow.outbound`): one deadline for the whole request,
public addresses only (INDEXNOW_ALLOW_PRIVATE_ENDPOINT opts out, as for ``key
check``), no redirect followed, the body read up to :data:`MAX_PAGE_BYTES`.
Its session keeps no cookie.

Either way a page that cannot be read raises :class:`PageError`, whose message
becomes the temporary verdict's detail.
"""

from __future__ import annotations

import http.cookiejar
import io
import sys
import time
from collections.abc import Callable, Iterable
from http.client import HTTPException
from typing import Any, Protocol
from urllib.parse import unquote_to_bytes, urlsplit

import requests
import urllib3
from flask import Flask

from .. import outbound
from ..safetext import safe_text
from ..version import __version__
from .page import PageAnswer

#: The WSGI environ key set on a verification request: views and hooks may look for it.
ENVIRON_KEY = "indexnow.verify"
#: The User-Agent of every verification request, without its version (see :func:`user_agent`).
USER_AGENT_NAME = "Flask-IndexNow-Verify"
#: Bytes of a page read at most: the head is what matters, and it comes first.
MAX_PAGE_BYTES = 512 * 1024
_READ_SIZE = 64 * 1024


def user_agent() -> str:
    """``Flask-IndexNow-Verify/<version>``."""
    return f"{USER_AGENT_NAME}/{__version__}"


class PageError(Exception):
    """The page could not be read now (no answer in time, an exception in the view, …): temporary."""


class Fetcher(Protocol):
    def __call__(self, url: str) -> PageAnswer: ...


def from_app(app: Flask, url: str, max_bytes: int = MAX_PAGE_BYTES) -> PageAnswer:
    """GET ``url`` from ``app`` in-process (see the module's docstring)."""
    environ = wsgi_environ(url)
    answer: list[Any] = []

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Callable[[bytes], None]:
        answer[:] = [status, headers]
        return _no_write

    with app.app_context():  # the view's own context: its session is removed when it ends
        try:
            body = app.wsgi_app(environ, start_response)
            try:
                data = _read_capped(body, max_bytes)
            finally:
                close = getattr(body, "close", None)
                if close is not None:
                    close()
        except Exception as exc:  # noqa: BLE001 - the view's failure is the page's answer
            raise PageError(f"the view raised {exc.__class__.__name__}: {safe_text(str(exc), 200)}") from None
    if not answer:
        raise PageError("the application gave no answer")
    status, headers = answer
    return PageAnswer(int(status.split(" ", 1)[0]), list(headers), data)


def wsgi_environ(url: str) -> dict[str, Any]:
    """The WSGI environ of a plain ``GET url`` as a server would build it (PEP 3333), marked as ours.

    Built by hand rather than through werkzeug's ``EnvironBuilder``: the same
    keys, at a fraction of the cost, which is most of what a verification adds
    to the page's own work. Like ``EnvironBuilder``'s, it has no ``REMOTE_ADDR``:
    the request comes from no client, and a view that trusts loopback callers
    must not take it for one.
    """
    parts = urlsplit(url)
    scheme = parts.scheme
    port = parts.port or (443 if scheme == "https" else 80)
    path = parts.path or "/"
    raw_uri = path + (f"?{parts.query}" if parts.query else "")
    return {
        "REQUEST_METHOD": "GET",
        "SCRIPT_NAME": "",
        "PATH_INFO": unquote_to_bytes(path).decode("latin-1"),  # the WSGI spelling of the decoded path
        "QUERY_STRING": parts.query,
        "REQUEST_URI": raw_uri,
        "RAW_URI": raw_uri,
        "SERVER_NAME": parts.hostname or "",
        "SERVER_PORT": str(port),
        "HTTP_HOST": parts.netloc,
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_USER_AGENT": user_agent(),
        "HTTP_ACCEPT": "text/html,*/*;q=0.8",
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": scheme,
        "wsgi.input": io.BytesIO(),
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": False,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
        ENVIRON_KEY: True,
    }


def _no_write(data: bytes) -> None:
    """The ``write`` callable of ``start_response``: a legacy app writing through it is not read."""


def _read_capped(chunks: Iterable[bytes], max_bytes: int) -> bytes:
    parts: list[bytes] = []
    total = 0
    for chunk in chunks:
        parts.append(chunk)
        total += len(chunk)
        if total >= max_bytes:
            break
    return b"".join(parts)[:max_bytes]


class _NoCookies(http.cookiejar.DefaultCookiePolicy):
    """A verification keeps no cookie: every page is asked for as a stranger would."""

    def set_ok(self, cookie: Any, request: Any) -> bool:
        return False

    def return_ok(self, cookie: Any, request: Any) -> bool:
        return False


def http_session() -> outbound.OutboundSession:
    """A session for verification GETs (checked addresses, no cookies); close it after."""
    session = outbound.new_http_session()
    session.cookies.set_policy(_NoCookies())
    session.headers["User-Agent"] = user_agent()
    return session


def over_http(session: requests.Session, url: str, *, timeout: float, allow_private: bool,
              deadline: float | None = None, max_bytes: int = MAX_PAGE_BYTES) -> PageAnswer:
    """GET ``url`` for real under the outbound rules (see the module's docstring).

    ``deadline`` (a :func:`time.monotonic` instant, the tick's budget) cuts
    the request's own ``timeout`` short.
    """
    end = time.monotonic() + timeout
    if deadline is not None:
        end = min(end, deadline)
    with outbound.scope(end, allow_private=allow_private) as rules:
        try:
            response = session.get(url, timeout=timeout, allow_redirects=False, stream=True,
                                   headers={"Accept": "text/html,*/*;q=0.8"})
        except outbound.RefusedAddressError as exc:
            raise PageError(str(exc)) from None
        except (requests.RequestException, OSError) as exc:
            if rules.expired or isinstance(exc, (requests.Timeout, TimeoutError)):
                raise PageError(f"no answer within {timeout:g}s") from None
            raise PageError(f"could not connect ({exc.__class__.__name__})") from None
        with response:
            if rules.expired:
                raise PageError(f"no answer within {timeout:g}s")
            body = _read_body(response, max_bytes, rules, timeout)
            return PageAnswer(response.status_code, list(response.headers.items()), body)


def _read_body(response: requests.Response, max_bytes: int, rules: outbound.Scope, timeout: float) -> bytes:
    """Up to ``max_bytes`` of the (decoded) body; a body cut by the deadline is no answer."""
    parts: list[bytes] = []
    total = 0
    try:
        while total < max_bytes:
            chunk = response.raw.read(min(_READ_SIZE, max_bytes - total), decode_content=True)
            if rules.expired:
                raise PageError(f"no answer within {timeout:g}s")
            if not chunk:
                break
            parts.append(chunk)
            total += len(chunk)
    except (urllib3.exceptions.HTTPError, requests.RequestException, OSError, HTTPException) as exc:
        if rules.expired or isinstance(exc, (urllib3.exceptions.ReadTimeoutError, TimeoutError)):
            raise PageError(f"no answer within {timeout:g}s") from None
        raise PageError(f"the connection failed ({exc.__class__.__name__})") from None
    return b"".join(parts)
