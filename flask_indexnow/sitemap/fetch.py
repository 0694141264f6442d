"""Downloading a remote sitemap without letting it reach where it should not.

A sitemap URL (or a ``<loc>`` in an index, or a redirect) is chosen by whoever
wrote the document, so it gets the address checks of queued URLs
(:func:`~flask_indexnow.urls.check_url`) at every hop: redirects are followed
by hand. The body is streamed to a local file under a size cap, a per-read
timeout and an overall deadline, and stored as served (gzip included) for
:mod:`.document` to unwrap within its own cap.
"""

from __future__ import annotations

import time
from typing import IO
from urllib.parse import urljoin, urlsplit, urlunsplit

import requests
import urllib3

from ..endpoint import new_http_session
from ..errors import InvalidURLError
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
        raise SitemapError(f"cannot fetch {url}: {problem}{hint}") from None


def fetch_sitemap(
    url: str,
    dest: IO[bytes],
    *,
    allow_private: bool = False,
    timeout: float = 10.0,
    max_bytes: int = MAX_SITEMAP_BYTES,
    http: requests.Session | None = None,
) -> str:
    """Download ``url`` into ``dest`` as served; return the final URL after redirects.

    Every hop goes through the address checks (a redirect to a private host is
    refused like the URL itself). The body is stored as it came (gzip included,
    for :func:`iter_document_bytes` to unwrap within the cap); other content
    encodings are refused. ``allow_private`` lets loopback/private hosts and
    plain names through, for local sandboxes and tests.
    """
    session = http or new_http_session()
    current = fetchable(url, allow_private)
    deadline = time.monotonic() + DOWNLOAD_DEADLINE
    try:
        for _hop in range(MAX_REDIRECTS + 1):
            try:
                response = session.get(
                    current, timeout=timeout, allow_redirects=False, stream=True,
                    headers={"Accept-Encoding": "gzip, identity"},
                )
            except requests.Timeout:
                raise SitemapError(f"cannot fetch {current}: no answer within {timeout:g}s") from None
            except requests.RequestException as exc:
                raise SitemapError(f"cannot fetch {current}: {exc.__class__.__name__}") from None
            with response:
                location = response.headers.get("Location")
                if response.status_code in (301, 302, 303, 307, 308) and location:
                    current = fetchable(urljoin(current, location), allow_private)
                    continue
                if response.status_code != 200:
                    raise SitemapError(f"cannot fetch {current}: HTTP {response.status_code}")
                encoding = (response.headers.get("Content-Encoding") or "identity").strip().lower()
                if encoding not in ("identity", "gzip", "x-gzip"):
                    raise SitemapError(f"cannot fetch {current}: unsupported Content-Encoding {encoding!r}")
                _copy_capped(response, dest, current, max_bytes, deadline, timeout)
                return current
        raise SitemapError(f"cannot fetch {url}: more than {MAX_REDIRECTS} redirects")
    finally:
        if http is None:
            session.close()


def _copy_capped(
    response: requests.Response, dest: IO[bytes], url: str, max_bytes: int, deadline: float, timeout: float
) -> None:
    total = 0
    try:
        while True:
            chunk = response.raw.read(READ_SIZE, decode_content=False)
            if not chunk:
                return
            total += len(chunk)
            if total > max_bytes:
                raise too_big(url, max_bytes)
            if time.monotonic() > deadline:
                raise SitemapError(f"cannot fetch {url}: the download took longer than {DOWNLOAD_DEADLINE:g}s")
            dest.write(chunk)
    except (urllib3.exceptions.ReadTimeoutError, TimeoutError):
        raise SitemapError(f"cannot fetch {url}: no data within {timeout:g}s") from None
    except (urllib3.exceptions.HTTPError, requests.RequestException, ConnectionError) as exc:
        raise SitemapError(f"cannot fetch {url}: the connection failed ({exc.__class__.__name__})") from None
