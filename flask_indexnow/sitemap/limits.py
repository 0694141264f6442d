"""The caps every sitemap read stays within, and the one error it raises.

Kept in one place because they are the reader's safety contract: the protocol's
50 MB limit is enforced while decompressing (:mod:`.document`) and while
downloading (:mod:`.fetch`), and the other numbers bound how far a hostile or
broken index can make one submission go.
"""

from __future__ import annotations

from ..errors import IndexNowError

#: The sitemap protocol's limit for one file, uncompressed.
MAX_SITEMAP_BYTES = 50 * 1024 * 1024
#: The only namespace a sitemap may declare (a document with none is accepted too).
SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
#: Levels of sitemap indexes followed; the protocol allows one (an index lists urlsets).
MAX_DEPTH = 3
#: Element nesting one document may have: a sitemap needs 3 (``urlset/url/loc``), extensions
#: (images, news, video) a few more. The parser holds every open element, so deeper nesting is
#: refused: 17 million nested elements in 51 KB of gzip took 2.2 GB before this cap.
MAX_XML_DEPTH = 16
#: Distinct element and attribute names one document may use (a sitemap with every extension
#: uses about 30). The parser keeps every name it has seen for the whole document.
MAX_XML_NAMES = 1024
#: Bytes of one markup token (a start tag with its attributes, a comment, a processing
#: instruction). The parser holds a token whole until its end, so one 12 MB start tag full of
#: attributes took 220 MB; a sitemap's tags are short. Text is streamed and not counted.
MAX_XML_RUN = 1024 * 1024
#: Documents one submission reads at most, indexes included.
MAX_SITEMAPS = 1000
#: URLs per ``enqueue_many`` call (each call commits on its own).
CHUNK = 1000
#: Redirect hops followed when fetching a remote sitemap.
MAX_REDIRECTS = 5
#: Seconds one download may take in all, however slowly the server trickles bytes.
DOWNLOAD_DEADLINE = 300.0
#: How many rejected URLs a result keeps with their reasons (the rest are only counted).
REJECTED_KEPT = 20

#: Bytes read at a time, from a file, a gzip layer or a socket.
READ_SIZE = 64 * 1024


class SitemapError(IndexNowError, ValueError):
    """A sitemap that cannot be read or may not be read: nothing of it is queued."""


def too_big(label: str, max_bytes: int) -> SitemapError:
    """The error for a document over ``max_bytes``, whether found on disk or while downloading."""
    return SitemapError(
        f"{label} is larger than {max_bytes // (1024 * 1024)} MB uncompressed, the sitemap protocol's limit: "
        "refused (split it and list the parts in a sitemap index)"
    )
