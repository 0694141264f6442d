"""Downloading a remote sitemap without letting it reach where it should not.

A sitemap URL (or a ``<loc>`` in an index, or a redirect) is chosen by whoever
wrote the document, so it gets the address checks of queued URLs
(:func:`~flask_indexnow.urls.check_url`) at every hop: redirects are followed
by hand. The addresses a name resolves to are checked too, and the connection
goes to exactly the address checked (:mod:`flask_indexnow.outbound`: no DNS
rebinding). The answer must come within the timeout and the body within the
download deadline, both counted for the whole request; the body is streamed to
a local file under a size cap and stored as served (gzip included) for
:mod:`.document` to unwrap within its own cap. Server text in errors goes
through :func:`~flask_indexnow.safetext.safe_text`.
"""

from __future__ import annotations

import time
from http.client import HTTPException
from typing import IO
from urllib.parse import urljoin, urlsplit, urlunsplit

import requests
import urllib3

from .. import outbound
from ..errors import InvalidURLError
from ..outbound import new_http_session
from ..safetext import safe_text
from ..urls import check_url
from .limits import DOWNLOAD_DEADLINE, MAX_REDIRECTS, MAX_SITEMAP_BYTES, READ_SIZE, SitemapError, too_big


def fetchable(url: str, allow_private: bool) -> str:
    """``url`` made ready to fetch, or :class:`SitemapError` if it may not be."""
    try:
        return check_url(url).url
    except InvalidURLError as exc:
        problem = str(exc)
        if allow_private:
            parts = urlsplit(url.strip())
            try:
                parts.port
            except ValueError:
                parts = urlsplit("")
            if parts.scheme.lower() in ("http", "https") and parts.hostname and "@" not in parts.netloc:
                return urlunsplit((parts.scheme.lower(), parts.netloc, parts.path or "/", parts.query, ""))
        hint = ""
        if not allow_private and "host" in problem:
            hint = "; --allow-private-hosts (allow_private=True) lets a local sandbox through"
        raise SitemapError(f"cannot fetch {safe_text(url)}: {safe_text(problem)}{hint}") from None


def fetch_sitemap(
    url: str,
    dest: IO[bytes],
    *,
    allow_private: bool = False,
    timeout: float = 10.0,
    max_bytes: int = MAX_SITEMAP_BYTES,
    http: requests.Session | None = None,
    download_deadline: float = DOWNLOAD_DEADLINE,
) -> str:
    """Download ``url`` into ``dest`` as served; return the final URL after redirects.

    Every hop goes through the address checks, on the name and on the
    addresses it resolves to (a redirect to a private host is refused like the
    URL itself; see :mod:`flask_indexnow.outbound`). Each hop's answer (status
    line and headers) must arrive within ``timeout`` seconds in all, and the
    body within ``download_deadline`` seconds, however slowly the server
    trickles. The body is stored as it came (gzip included, for
    :func:`iter_document_bytes` to unwrap within the cap); other content
    encodings are refused. ``allow_private`` lets loopback/private hosts and
    plain names through, for local sandboxes and tests. ``http`` must come
    from :func:`~flask_indexnow.outbound.new_http_session` (its connections do
    the address checks).
    """
    session = http or new_http_session()
    current = fetchable(url, allow_private)
    try:
        for _hop in range(MAX_REDIRECTS + 1):
            with outbound.scope(time.monotonic() + timeout, allow_private=allow_private) as rules:
                try:
                    response = session.get(
                        current, timeout=timeout, allow_redirects=False, stream=True,
                        headers={"Accept-Encoding": "gzip, identity"},
                    )
                except outbound.RefusedAddressError as exc:
                    hint = "" if allow_private else "; --allow-private-hosts (allow_private=True) lets a local sandbox through"
                    raise SitemapError(f"cannot fetch {safe_text(current)}: {exc}{hint}") from None
                except (requests.RequestException, OSError) as exc:
                    if rules.expired or isinstance(exc, (requests.Timeout, TimeoutError)):
                        raise SitemapError(f"cannot fetch {safe_text(current)}: no answer within {timeout:g}s") from None
                    raise SitemapError(f"cannot fetch {safe_text(current)}: {exc.__class__.__name__}") from None
                with response:
                    if rules.expired:  # the watchdog cut the answer's head: what came is not the answer
                        raise SitemapError(f"cannot fetch {safe_text(current)}: no answer within {timeout:g}s")
                    location = response.headers.get("Location")
                    if response.status_code in (301, 302, 303, 307, 308) and location:
                        current = fetchable(urljoin(current, location), allow_private)
                        continue
                    if response.status_code != 200:
                        raise SitemapError(f"cannot fetch {safe_text(current)}: HTTP {response.status_code}")
                    encoding = (response.headers.get("Content-Encoding") or "identity").strip().lower()
                    if encoding not in ("identity", "gzip", "x-gzip"):
                        raise SitemapError(
                            f"cannot fetch {safe_text(current)}: unsupported Content-Encoding {safe_text(encoding)!r}"
                        )
                    rules.set_deadline(time.monotonic() + download_deadline)
                    _copy_capped(response, dest, current, max_bytes, rules, timeout, download_deadline)
                    return current
        raise SitemapError(f"cannot fetch {safe_text(url)}: more than {MAX_REDIRECTS} redirects")
    finally:
        if http is None:
            session.close()


def _copy_capped(
    response: requests.Response,
    dest: IO[bytes],
    url: str,
    max_bytes: int,
    rules: outbound.Scope,
    timeout: float,
    download_deadline: float,
) -> None:
    total = 0
    late = SitemapError(f"cannot fetch {safe_text(url)}: the download took longer than {download_deadline:g}s")
    try:
        while True:
            chunk = response.raw.read(READ_SIZE, decode_content=False)
            if rules.expired:
                raise late  # the watchdog cut the connection: what came is not the whole document
            if not chunk:
                return
            total += len(chunk)
            if total > max_bytes:
                raise too_big(safe_text(url), max_bytes)
            dest.write(chunk)
    except (urllib3.exceptions.ReadTimeoutError, TimeoutError):
        if rules.expired:
            raise late from None
        raise SitemapError(f"cannot fetch {safe_text(url)}: no data within {timeout:g}s") from None
    except (urllib3.exceptions.HTTPError, requests.RequestException, ConnectionError, HTTPException) as exc:
        if rules.expired:
            raise late from None
        raise SitemapError(f"cannot fetch {safe_text(url)}: the connection failed ({exc.__class__.__name__})") from None
