"""Reading sitemaps safely and queueing their URLs in bulk.

A sitemap is untrusted input: it may come from a URL, it may be gzipped, and
XML has well-known ways to hurt the reader (entity expansion bombs, external
entities that read local files or reach internal hosts). So:

- XML is parsed with :mod:`defusedxml`, as a stream, into no tree at all; a
  document that declares a DTD or any entity is refused whole.
- Every document is capped at 50 MB *after* decompression (the sitemap
  protocol's own limit), so a gzip bomb stops at the cap.
- A sitemap index is followed to its child sitemaps, at most ``max_depth``
  levels of indexes and ``max_sitemaps`` documents, each read once (no loops).
- Remote documents are fetched with the address checks of queued URLs
  (:func:`~flask_indexnow.urls.check_url`), a timeout, a size cap while
  streaming, and redirects followed by hand so that every hop is checked.

:func:`submit_sitemap` reads everything once to validate and count it before
it writes a single row (a broken document queues nothing), then reads it again
from local copies and queues it through :func:`queue.enqueue_many` in chunks,
so memory stays flat whatever the sitemap's size.

The modules, one job each:

- :mod:`.limits`: the caps and :class:`SitemapError`;
- :mod:`.dates`: W3C datetimes (``<lastmod>``, ``--since``);
- :mod:`.document`: one document on disk, unwrapped, capped and parsed;
- :mod:`.fetch`: downloading, with every redirect hop checked;
- :mod:`.reader`: walking indexes (depth, count, loops) into one stream of URLs;
- :mod:`.submit`: queueing it all in chunks.
"""

from __future__ import annotations

from .dates import parse_since, parse_w3c_datetime
from .document import iter_document_bytes, parse_document
from .fetch import fetch_sitemap
from .limits import (
    CHUNK,
    DOWNLOAD_DEADLINE,
    MAX_DEPTH,
    MAX_REDIRECTS,
    MAX_SITEMAP_BYTES,
    MAX_SITEMAPS,
    REJECTED_KEPT,
    SITEMAP_NS,
    SitemapError,
)
from .reader import ReadStats, SitemapReader, SitemapURL, read_sitemap
from .submit import SitemapResult, submit_sitemap

__all__ = [
    "CHUNK",
    "DOWNLOAD_DEADLINE",
    "MAX_DEPTH",
    "MAX_REDIRECTS",
    "MAX_SITEMAPS",
    "MAX_SITEMAP_BYTES",
    "REJECTED_KEPT",
    "SITEMAP_NS",
    "ReadStats",
    "SitemapError",
    "SitemapReader",
    "SitemapResult",
    "SitemapURL",
    "fetch_sitemap",
    "iter_document_bytes",
    "parse_document",
    "parse_since",
    "parse_w3c_datetime",
    "read_sitemap",
    "submit_sitemap",
]
