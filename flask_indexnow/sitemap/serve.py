"""The sitemap route (INDEXNOW_SITEMAP_URL) and its parts: host, gzip, ETag/Last-Modified and 304.

``/sitemap.xml`` answers the request host's ``<urlset>`` while it fits in one
file (INDEXNOW_SITEMAP_MAX_URLS URLs, 50 MB); beyond, a ``<sitemapindex>``
whose parts are ``/sitemap-1.xml``, ``/sitemap-2.xml`` … beside it (the stem
of the setting plus ``-N.xml``: plain paths, so the files the CLI writes can
be served as static files under the same names). The documents come from the
shared build of :mod:`.cache`.
"""

from __future__ import annotations

import gzip
import hashlib
from datetime import datetime
from urllib.parse import urlsplit

from flask import Flask, Response, abort, request

from ..errors import InvalidURLError
from ..state import IndexNowState, get_state
from ..urls import canonical_host
from . import xmlwrite
from .cache import HostSitemap, PartInfo, load


def part_path(sitemap_url: str, number: int) -> str:
    """``/sitemap.xml`` → ``/sitemap-3.xml``."""
    return f"{sitemap_url[: -len('.xml')]}-{number}.xml"


def register_sitemap(app: Flask, state: IndexNowState) -> None:
    """Add the sitemap and its parts to the URL map (when INDEXNOW_SITEMAP_URL is set)."""
    url = state.settings.sitemap_url
    if url is None:
        return
    app.add_url_rule(url, "indexnow_sitemap", sitemap_view)
    app.add_url_rule(part_path(url, 0).replace("-0.xml", "-<int:number>.xml"), "indexnow_sitemap_part",
                     sitemap_part_view)


def sitemap_view() -> Response:
    state = get_state()
    host = _request_host(state)
    sitemap = load(state, host, 1)
    if len(sitemap.parts) > 1:
        return _respond(index_bytes(state, sitemap), sitemap_lastmod(sitemap), state)
    return _respond_part(sitemap, state)


def sitemap_part_view(number: int) -> Response:
    state = get_state()
    host = _request_host(state)
    sitemap = load(state, host, number)
    if not 1 <= number <= len(sitemap.parts):
        abort(404)
    return _respond_part(sitemap, state)


def _request_host(state: IndexNowState) -> str:
    """The request's host as URLs store it; 404 for a host whose URLs this app never submits."""
    try:
        name = urlsplit(f"//{request.host}").hostname or ""
        host = canonical_host(f"[{name}]" if ":" in name else name)
    except (ValueError, InvalidURLError):  # a Host header no URL of ours can carry
        abort(404)
    allowed = state.settings.allowed_hosts
    if allowed is not None and host not in allowed:
        abort(404)
    return host


def _respond_part(sitemap: HostSitemap, state: IndexNowState) -> Response:
    if sitemap.wanted is None:  # load() keeps the part it was asked for, when there is one
        abort(404)
    info = next(p for p in sitemap.parts if p.digest == sitemap.wanted_digest)
    return _respond(sitemap.wanted, info.lastmod, state, digest=info.digest, compressed=True)


def _respond(body: bytes, lastmod: datetime | None, state: IndexNowState, *, digest: str | None = None,
             compressed: bool = False) -> Response:
    """The document (gzip bytes when ``compressed``), gzip or not as the client accepts, with ETag and 304."""
    if digest is None:
        digest = hashlib.sha256(body).hexdigest()[:32]
    gzip_ok = request.accept_encodings["gzip"] > 0 or request.accept_encodings["x-gzip"] > 0
    if gzip_ok:
        payload = body if compressed else gzip.compress(body, mtime=0)
    else:
        payload = gzip.decompress(body) if compressed else body
    response = Response(payload, content_type="application/xml; charset=utf-8")
    response.vary.add("Accept-Encoding")
    if gzip_ok:
        response.headers["Content-Encoding"] = "gzip"
    response.set_etag(f"{digest}-gz" if gzip_ok else digest)
    if lastmod is not None:
        response.last_modified = lastmod
    response.cache_control.public = True
    response.cache_control.max_age = state.settings.sitemap_cache_seconds
    response.make_conditional(request)
    return response


def sitemap_lastmod(sitemap: HostSitemap) -> datetime | None:
    times = [p.lastmod for p in sitemap.parts if p.lastmod is not None]
    return max(times) if times else None


def index_bytes(state: IndexNowState, sitemap: HostSitemap) -> bytes:
    """The ``<sitemapindex>`` the route answers for a host's parts."""
    return index_document(sitemap.parts, state.settings.sitemap_url or "/sitemap.xml")


def index_document(parts: list[PartInfo], sitemap_url: str) -> bytes:
    """A ``<sitemapindex>`` of ``parts``, each at ``part_path(sitemap_url, n)`` on the origin of its URLs."""
    return xmlwrite.index_document([(f"{p.origin}{part_path(sitemap_url, p.number)}", p.lastmod) for p in parts])
