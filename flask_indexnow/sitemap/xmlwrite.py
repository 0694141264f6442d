"""Writing sitemap XML (sitemaps.org 0.9) that no URL can break.

A ``<loc>`` is first made a valid URI (RFC 3986, what the schema's ``anyURI``
and the protocol ask): after the host, every character a URI may not hold
(``<``, ``>``, ``"``, space, ``[``, ``]``, ``{``, ``}``, ``|``, a backslash, ``^``,
a backtick, non-ASCII, controls, a ``%`` that starts no escape) is
percent-encoded, which names the same resource. The text is then escaped for
XML (``&``, ``<``, ``>`` and quotes), and any character XML 1.0 cannot carry
at all is percent-encoded rather than written: escaping alone would still give
a document no parser accepts.

The writer counts the bytes it has written, so a part can be closed before it
passes the protocol's 50 MB.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from urllib.parse import quote

from ..clock import as_utc

NAMESPACE = "http://www.sitemaps.org/schemas/sitemap/0.9"
HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n'
URLSET_OPEN = f'{HEAD}<urlset xmlns="{NAMESPACE}">\n'
URLSET_CLOSE = "</urlset>\n"
INDEX_OPEN = f'{HEAD}<sitemapindex xmlns="{NAMESPACE}">\n'
INDEX_CLOSE = "</sitemapindex>\n"
#: The protocol's limit on one uncompressed sitemap file.
MAX_BYTES = 50 * 1024 * 1024

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;"})


_NOT_URI = re.compile(r"[^A-Za-z0-9\-._~:/?#@!$&'()*+,;=%]|%(?![0-9A-Fa-f]{2})")


def uri(url: str) -> str:
    """``url`` with what RFC 3986 does not allow after the authority percent-encoded (UTF-8)."""
    start = url.find("//")
    end = url.find("/", start + 2) if start >= 0 else 0
    if end < 0:
        return url
    head, rest = url[:end], url[end:]
    if _NOT_URI.search(rest):
        rest = _NOT_URI.sub(lambda m: quote(m.group(0).encode("utf-8", "surrogatepass"), safe=""), rest)
    return head + rest


def text(value: str) -> str:
    """``value`` as XML character data: escaped, and what XML cannot hold percent-encoded."""
    if _NOT_XML.search(value):
        value = _NOT_XML.sub(lambda m: quote(m.group(0).encode("utf-8", "surrogatepass")), value)
    return value.translate(_ESCAPES)


def w3c(value: datetime | date) -> str:
    """A W3C datetime in UTC (``2026-12-01T21:06:19+00:00``); a plain date stays a date."""
    if not isinstance(value, datetime):
        return value.isoformat()
    return as_utc(value).replace(microsecond=0).isoformat()


def url_entry(loc: str, lastmod: datetime | date | None) -> str:
    """One ``<url>`` element, on its own line."""
    if lastmod is None:
        return f"<url><loc>{text(uri(loc))}</loc></url>\n"
    return f"<url><loc>{text(uri(loc))}</loc><lastmod>{w3c(lastmod)}</lastmod></url>\n"


def sitemap_entry(loc: str, lastmod: datetime | date | None) -> str:
    """One ``<sitemap>`` element of an index."""
    if lastmod is None:
        return f"<sitemap><loc>{text(uri(loc))}</loc></sitemap>\n"
    return f"<sitemap><loc>{text(uri(loc))}</loc><lastmod>{w3c(lastmod)}</lastmod></sitemap>\n"


def index_document(entries: list[tuple[str, datetime | date | None]]) -> bytes:
    """A whole ``<sitemapindex>`` (it lists parts: small)."""
    return (INDEX_OPEN + "".join(sitemap_entry(loc, when) for loc, when in entries) + INDEX_CLOSE).encode("utf-8")
