"""Walking a sitemap or sitemap index, children included, as one stream of URLs.

An index is followed to its child sitemaps, at most ``max_depth`` levels of
indexes and ``max_sitemaps`` documents, each read once (no loops). Remote
documents are fetched once into a private folder so that a second pass (the
one :func:`~.submit.submit_sitemap` queues from) reads the very same bytes
without touching the network again.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import urljoin, urlsplit

import requests

from ..outbound import new_http_session
from .dates import parse_since, parse_w3c_datetime
from .document import iter_document_bytes, parse_document
from .fetch import fetch_sitemap, fetchable
from .limits import MAX_DEPTH, MAX_SITEMAP_BYTES, MAX_SITEMAPS, SitemapError

logger = logging.getLogger(__name__)


class SitemapURL(NamedTuple):
    """One ``<url>`` entry: its ``<loc>`` as written and its ``<lastmod>`` (None when absent or unreadable)."""

    url: str
    lastmod: datetime | None


@dataclass
class ReadStats:
    """What one pass over a sitemap (and its children) saw."""

    sitemaps: int = 0
    #: ``<url>`` entries read, before the ``since`` filter.
    found: int = 0
    #: Entries left out because their ``lastmod`` is before ``since``.
    older: int = 0
    #: Entries kept under ``since`` only because their ``lastmod`` is missing or unreadable.
    undated: int = 0
    #: Entries whose ``lastmod`` is present but not a W3C datetime.
    bad_lastmod: int = 0


@dataclass(frozen=True)
class _Document:
    label: str
    path: Path | None = None
    url: str | None = None

    @property
    def key(self) -> str:
        return f"file:{self.path}" if self.path is not None else f"url:{self.url}"


def _is_url(source: str) -> bool:
    return bool(re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", source))


class SitemapReader:
    """Iterates the URLs of a sitemap or sitemap index, children included.

    Each iteration reads everything again, from local copies of the remote
    documents fetched the first time (kept until :meth:`close`), and refreshes
    :attr:`stats`. Use it as a context manager.

    A child of a *local* sitemap index is read from the index's own folder when
    a file of the same name is there (a site's build output), and fetched from
    its ``<loc>`` otherwise.
    """

    def __init__(
        self,
        source: str | os.PathLike[str],
        since: str | date | datetime | None = None,
        *,
        allow_private: bool = False,
        timeout: float = 10.0,
        max_depth: int = MAX_DEPTH,
        max_sitemaps: int = MAX_SITEMAPS,
        max_bytes: int = MAX_SITEMAP_BYTES,
        http: requests.Session | None = None,
    ) -> None:
        self.since = parse_since(since)
        self.allow_private = allow_private
        self.timeout = timeout
        self.max_depth = max_depth
        self.max_sitemaps = max_sitemaps
        self.max_bytes = max_bytes
        self.stats = ReadStats()
        self._http = http
        self._own_http: requests.Session | None = None
        self._workdir: str | None = None
        self._fetched: dict[str, tuple[Path, str]] = {}
        text = os.fspath(source).strip()
        if not text:
            raise SitemapError("no sitemap given: pass a file path or an http(s) URL")
        if _is_url(text):
            if not text.lower().startswith(("http://", "https://")):
                raise SitemapError(f"{text}: only http(s) URLs and local files can be read")
            self.root = _Document(text, url=fetchable(text, allow_private))
        else:
            path = Path(text).expanduser()
            if not path.exists() and re.match(r"^[\w-]+(\.[\w-]+)+/", text):
                raise SitemapError(f"{text}: no such file (for a URL, write https://{text})")
            self.root = _Document(text, path=path.resolve())

    def __enter__(self) -> SitemapReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Delete the local copies of fetched documents."""
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None
            self._fetched.clear()
        if self._own_http is not None:
            self._own_http.close()
            self._own_http = None

    def __iter__(self) -> Iterator[SitemapURL]:
        self.stats = ReadStats()
        return self._walk(self.root, 0, set())

    def _walk(self, doc: _Document, depth: int, seen: set[str]) -> Iterator[SitemapURL]:
        if doc.key in seen:
            logger.info("IndexNow: %s is listed more than once; read once", doc.label)
            return
        seen.add(doc.key)
        if len(seen) > self.max_sitemaps:
            raise SitemapError(f"more than {self.max_sitemaps} sitemaps to read: refused")
        path, base_url = self._local_copy(doc)
        self.stats.sitemaps += 1
        for kind, loc, lastmod in parse_document(iter_document_bytes(path, doc.label, self.max_bytes), doc.label):
            if kind == "sitemapindex":
                if depth >= self.max_depth:
                    raise SitemapError(f"{doc.label}: sitemap indexes nested more than {self.max_depth} levels deep")
                yield from self._walk(self._child(doc, base_url, loc), depth + 1, seen)
            else:
                entry = self._filter(loc, lastmod)
                if entry is not None:
                    yield entry

    def _filter(self, loc: str, lastmod_text: str | None) -> SitemapURL | None:
        stats = self.stats
        stats.found += 1
        period = parse_w3c_datetime(lastmod_text) if lastmod_text else None
        if lastmod_text and period is None:
            stats.bad_lastmod += 1
        if self.since is not None:
            if period is None:
                stats.undated += 1
            elif period[1] < self.since:
                stats.older += 1
                return None
        return SitemapURL(loc, period[0] if period else None)

    def _child(self, parent: _Document, base_url: str | None, loc: str) -> _Document:
        if not loc:
            raise SitemapError(f"{parent.label}: a <sitemap> entry has no <loc>")
        if parent.path is not None:
            name = Path(urlsplit(loc).path if _is_url(loc) else loc).name
            candidate = parent.path.parent / name
            if name and candidate.is_file():
                return _Document(str(candidate), path=candidate.resolve())
            if not _is_url(loc):
                raise SitemapError(f"{parent.label}: child sitemap {loc!r} is neither next to it nor an http(s) URL")
            url = loc
        else:
            url = urljoin(base_url or "", loc)
        return _Document(url, url=fetchable(url, self.allow_private))

    def _local_copy(self, doc: _Document) -> tuple[Path, str | None]:
        if doc.path is not None:
            return doc.path, None
        assert doc.url is not None
        if doc.url not in self._fetched:
            if self._workdir is None:
                self._workdir = tempfile.mkdtemp(prefix="indexnow-sitemap-")
            if self._http is None and self._own_http is None:
                self._own_http = new_http_session()
            path = Path(self._workdir) / f"{len(self._fetched)}.xml"
            with open(path, "wb") as dest:
                final = fetch_sitemap(
                    doc.url, dest, allow_private=self.allow_private, timeout=self.timeout,
                    max_bytes=self.max_bytes, http=self._http or self._own_http,
                )
            self._fetched[doc.url] = (path, final)
        return self._fetched[doc.url]


def read_sitemap(
    source: str | os.PathLike[str],
    since: str | date | datetime | None = None,
    **options: Any,
) -> Iterator[SitemapURL]:
    """Yield ``(url, lastmod)`` of every entry of a sitemap, following indexes.

    ``since`` keeps entries whose ``lastmod`` may fall at or after it; entries
    without a readable ``lastmod`` are kept. URLs are yielded as written; they
    are validated when queued. ``options`` go to :class:`SitemapReader`.
    """
    with SitemapReader(source, since, **options) as reader:
        yield from reader
