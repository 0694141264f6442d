"""Reading sitemaps safely and queueing their URLs in bulk (SPEC §7, §11).

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
"""

from __future__ import annotations

import gzip
import os
import re
import shutil
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import IO, Any, NamedTuple
from urllib.parse import urljoin, urlsplit, urlunsplit

import requests
import sqlalchemy as sa
import urllib3
from defusedxml import DTDForbidden, EntitiesForbidden, ExternalReferenceForbidden
from defusedxml.ElementTree import DefusedXMLParser, ParseError

from . import clock
from . import queue as queue_module
from .endpoint import new_http_session
from .errors import IndexNowError, InvalidURLError
from .state import IndexNowState, logger
from .urls import check_url

#: The sitemap protocol's limit for one file, uncompressed.
MAX_SITEMAP_BYTES = 50 * 1024 * 1024
#: The only namespace a sitemap may declare (a document with none is accepted too).
SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
#: Levels of sitemap indexes followed; the protocol allows one (an index lists urlsets).
MAX_DEPTH = 3
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

_READ_SIZE = 64 * 1024
_GZIP_MAGIC = b"\x1f\x8b"
_FIELD_MAX = 4096  # longer <loc>/<lastmod> text is cut; such a URL is rejected anyway
_W3C_RE = re.compile(
    r"^(?P<y>\d{4})(?:-(?P<m>\d{2})(?:-(?P<d>\d{2})"
    r"(?:[Tt ](?P<H>\d{2}):(?P<M>\d{2})(?::(?P<S>\d{2})(?:[.,](?P<f>\d{1,9}))?)?"
    r"(?P<tz>[Zz]|[+-]\d{2}(?::?\d{2})?)?)?)?)?$"
)


class SitemapError(IndexNowError, ValueError):
    """A sitemap that cannot be read or may not be read: nothing of it is queued."""


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


@dataclass
class SitemapResult:
    """What :func:`submit_sitemap` did."""

    sitemaps: int = 0
    found: int = 0
    older: int = 0
    undated: int = 0
    bad_lastmod: int = 0
    queued: int = 0
    unchanged: int = 0
    rejected_count: int = 0
    #: The first :data:`REJECTED_KEPT` rejected URLs with the reason.
    rejected: list[tuple[str, str]] = field(default_factory=list)


# -- dates -------------------------------------------------------------------------


def parse_w3c_datetime(text: str) -> tuple[datetime, datetime] | None:
    """Read a W3C datetime (``YYYY``, ``YYYY-MM``, ``YYYY-MM-DD``, or a full time with zone).

    Returns the first and the last instant of the period the value names (a
    bare year covers the whole year), both aware UTC, or None when ``text`` is
    not such a value. A time without a zone is taken as UTC, as everywhere
    in the extension; a space may stand for the ``T``.
    """
    match = _W3C_RE.match(text.strip())
    if not match:
        return None
    g = match.groupdict()
    try:
        year, month, day = int(g["y"]), int(g["m"] or 1), int(g["d"] or 1)
        hour, minute, second = int(g["H"] or 0), int(g["M"] or 0), int(g["S"] or 0)
        micro = int((g["f"] or "0")[:6].ljust(6, "0"))
        zone = timezone.utc
        if g["tz"] and g["tz"] not in "Zz":
            sign = -1 if g["tz"][0] == "-" else 1
            digits = g["tz"][1:].replace(":", "")
            offset = timedelta(hours=int(digits[:2]), minutes=int(digits[2:] or 0))
            zone = timezone(sign * offset)
        start = datetime(year, month, day, hour, minute, second, micro, tzinfo=zone)
    except ValueError:
        return None
    try:
        if g["m"] is None:
            following = start.replace(year=year + 1)
        elif g["d"] is None:
            following = start.replace(year=year + month // 12, month=month % 12 + 1)
        elif g["H"] is None:
            following = start + timedelta(days=1)
        elif g["S"] is None:
            following = start + timedelta(minutes=1)
        elif g["f"] is None:
            following = start + timedelta(seconds=1)
        else:
            following = start + timedelta(microseconds=1)
        end = following - timedelta(microseconds=1)
    except (ValueError, OverflowError):
        end = datetime.max.replace(tzinfo=timezone.utc)
    try:
        return clock.as_utc(start), clock.as_utc(end)
    except OverflowError:
        return None


def parse_since(value: str | date | datetime | None) -> datetime | None:
    """The ``--since`` moment as aware UTC: a date means its midnight UTC; naive means UTC."""
    if value is None:
        return None
    if isinstance(value, (date, datetime)):
        return clock.as_utc(value)
    period = parse_w3c_datetime(value)
    if period is None:
        raise ValueError(
            f"--since: cannot read {value!r} as a date "
            "(use YYYY-MM-DD, or YYYY-MM-DDThh:mm:ss with an optional zone such as Z or +02:00)"
        )
    return period[0]


# -- reading documents -----------------------------------------------------------------


def _open_layers(raw: IO[bytes]) -> IO[bytes]:
    """Unwrap up to two gzip layers, recognised by their magic bytes, not the name.

    Two, because a ``.xml.gz`` file served with ``Content-Encoding: gzip`` is
    stored as fetched. What comes out is capped by the caller.
    """
    stream: IO[bytes] = raw
    for _ in range(2):
        head = stream.peek(2)[:2] if hasattr(stream, "peek") else b""
        if head != _GZIP_MAGIC:
            break
        stream = gzip.GzipFile(fileobj=stream, mode="rb")  # type: ignore[assignment]
    return stream


def iter_document_bytes(path: Path, label: str, max_bytes: int = MAX_SITEMAP_BYTES) -> Iterator[bytes]:
    """Yield the (decompressed) bytes of one document, refusing more than ``max_bytes``."""
    try:
        raw = open(path, "rb")  # noqa: SIM115 - closed by the ``with`` below
    except IsADirectoryError:
        raise SitemapError(f"{label} is a directory, not a sitemap file") from None
    except FileNotFoundError:
        raise SitemapError(f"{label}: no such file") from None
    except OSError as exc:
        raise SitemapError(f"cannot read {label}: {exc.strerror or exc}") from None
    with raw:
        total = 0
        try:
            stream = _open_layers(raw)
            if stream is raw and os.fstat(raw.fileno()).st_size > max_bytes:
                raise _too_big(label, max_bytes)  # plain and too big: no need to read it
            while True:
                chunk = stream.read(min(_READ_SIZE, max_bytes - total + 1))
                if not chunk:
                    return
                total += len(chunk)
                if total > max_bytes:
                    raise _too_big(label, max_bytes)
                yield chunk
        except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
            raise SitemapError(f"{label} is not a valid gzip file ({exc or 'truncated'})") from None
        except OSError as exc:
            raise SitemapError(f"cannot read {label}: {exc.strerror or exc}") from None


def _too_big(label: str, max_bytes: int) -> SitemapError:
    return SitemapError(
        f"{label} is larger than {max_bytes // (1024 * 1024)} MB uncompressed, the sitemap protocol's limit: "
        "refused (split it and list the parts in a sitemap index)"
    )


class _SitemapTarget:
    """A push-parser target that keeps only ``<loc>`` and ``<lastmod>`` of each entry.

    No element tree is built, so memory does not grow with the document.
    """

    def __init__(self, label: str) -> None:
        self.label = label
        self.kind: str | None = None
        self.namespace: str | None = None
        self.entries: list[tuple[str, str | None]] = []
        self._depth = 0
        self._in_entry = False
        self._field: str | None = None
        self._text: list[str] = []
        self._size = 0
        self._values: dict[str, str] = {}

    def start(self, tag: str, attrib: dict[str, str]) -> None:
        self._depth += 1
        namespace, _, local = tag[1:].partition("}") if tag.startswith("{") else ("", "", tag)
        if self._depth == 1:
            if local not in ("urlset", "sitemapindex"):
                raise SitemapError(
                    f"{self.label} is not a sitemap: its root element is <{local}>, not <urlset> or <sitemapindex>"
                )
            if namespace not in ("", SITEMAP_NS):
                raise SitemapError(
                    f"{self.label} uses the XML namespace {namespace!r}; a sitemap must use {SITEMAP_NS!r}"
                )
            self.kind, self.namespace = local, namespace
        elif namespace == self.namespace:
            if self._depth == 2 and local == ("url" if self.kind == "urlset" else "sitemap"):
                self._in_entry, self._values = True, {}
            elif self._depth == 3 and self._in_entry and local in ("loc", "lastmod"):
                self._field, self._text, self._size = local, [], 0

    def data(self, text: str) -> None:
        if self._field is not None and self._size <= _FIELD_MAX:
            self._text.append(text)
            self._size += len(text)

    def end(self, tag: str) -> None:
        if self._depth == 3 and self._field is not None:
            self._values[self._field] = "".join(self._text).strip()[: _FIELD_MAX + 1]
            self._field = None
        elif self._depth == 2 and self._in_entry:
            self.entries.append((self._values.get("loc", ""), self._values.get("lastmod")))
            self._in_entry = False
        self._depth -= 1

    def close(self) -> None:
        return None


def _doctype_refused(name: str | None, *_args: Any) -> None:
    raise DTDForbidden(name or "", None, None)


def parse_document(chunks: Iterator[bytes], label: str) -> Iterator[tuple[str, str, str | None]]:
    """Yield ``(kind, loc, lastmod)`` for each entry of one sitemap document, streaming.

    ``kind`` is ``"urlset"`` or ``"sitemapindex"``. Raises :class:`SitemapError`
    for anything that is not a safe, well-formed sitemap; entries already
    yielded by then are the caller's to discard.
    """
    target = _SitemapTarget(label)
    # Entities are refused by defusedxml as soon as they are declared; the DTD
    # is refused at its end, so a file with entities gets the more precise message.
    parser = DefusedXMLParser(target=target, forbid_dtd=False, forbid_entities=True, forbid_external=True)
    doctype: list[str] = []
    parser.parser.StartDoctypeDeclHandler = lambda name, *rest: doctype.append(name)
    parser.parser.EndDoctypeDeclHandler = lambda: _doctype_refused(doctype[0] if doctype else None)
    try:
        for chunk in chunks:
            parser.feed(chunk)
            if target.entries:
                kind = target.kind or "urlset"
                for loc, lastmod in target.entries:
                    yield kind, loc, lastmod
                target.entries.clear()
        parser.close()
        for loc, lastmod in target.entries:
            yield target.kind or "urlset", loc, lastmod
    except EntitiesForbidden as exc:
        what = f"an external entity ({exc.sysid})" if exc.sysid else f"the entity {exc.name!r}"
        raise SitemapError(
            f"{label} declares {what}: refused whole (entities enable expansion bombs and reading local files)"
        ) from None
    except ExternalReferenceForbidden as exc:
        raise SitemapError(f"{label} references an external resource ({exc.sysid}): refused whole") from None
    except DTDForbidden as exc:
        if (exc.name or "").lower() == "html":
            raise SitemapError(f"{label} is an HTML page, not a sitemap") from None
        raise SitemapError(f"{label} declares a DTD (<!DOCTYPE {exc.name}>): refused whole; sitemaps need none") from None
    except ParseError as exc:
        raise SitemapError(f"{label} is not valid XML: {exc}") from None


# -- fetching ---------------------------------------------------------------------------


def _fetchable(url: str, allow_private: bool) -> str:
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
    current = _fetchable(url, allow_private)
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
                    current = _fetchable(urljoin(current, location), allow_private)
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
            chunk = response.raw.read(_READ_SIZE, decode_content=False)
            if not chunk:
                return
            total += len(chunk)
            if total > max_bytes:
                raise _too_big(url, max_bytes)
            if time.monotonic() > deadline:
                raise SitemapError(f"cannot fetch {url}: the download took longer than {DOWNLOAD_DEADLINE:g}s")
            dest.write(chunk)
    except (urllib3.exceptions.ReadTimeoutError, TimeoutError):
        raise SitemapError(f"cannot fetch {url}: no data within {timeout:g}s") from None
    except (urllib3.exceptions.HTTPError, requests.RequestException, ConnectionError) as exc:
        raise SitemapError(f"cannot fetch {url}: the connection failed ({exc.__class__.__name__})") from None


# -- walking sitemaps and indexes -------------------------------------------------------------


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
            self.root = _Document(text, url=_fetchable(text, allow_private))
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
        return _Document(url, url=_fetchable(url, self.allow_private))

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


# -- queueing -------------------------------------------------------------------------------


def submit_sitemap(
    state: IndexNowState,
    source: str | os.PathLike[str],
    since: str | date | datetime | None = None,
    *,
    progress: Callable[[int, int], None] | None = None,
    allow_private: bool = False,
    chunk_size: int = CHUNK,
) -> SitemapResult:
    """Queue every URL of a sitemap (or sitemap index) as ``update``.

    All documents are read and checked first: a document that is refused
    (unsafe XML, too large, not a sitemap, unreachable) raises
    :class:`SitemapError` before any row is written. URLs are then validated
    one by one: the invalid ones are counted and listed in the result, the
    valid ones queued in chunks of ``chunk_size`` (each chunk commits; running
    the same sitemap again is harmless, rows are upserted).
    ``progress(done, total)`` is called before the first chunk and after each.
    """
    if not state.settings.enabled:
        raise IndexNowError("INDEXNOW_ENABLED is False: nothing queued")
    if chunk_size < 1:
        raise ValueError("chunk_size must be at least 1")
    queue_table = state.models.Queue.__table__
    with state.engine().connect() as connection:  # missing tables fail now, not after the download
        connection.execute(sa.select(queue_table.c.id).limit(1)).all()
    with SitemapReader(source, since, allow_private=allow_private, timeout=state.settings.timeout) as reader:
        total = sum(1 for _ in reader)
        result = SitemapResult()
        if progress is not None:
            progress(0, total)
        done = 0
        batch: list[str] = []
        for entry in reader:
            batch.append(entry.url)
            if len(batch) >= chunk_size:
                done = _queue_chunk(state, batch, result, done, total, progress)
        if batch:
            _queue_chunk(state, batch, result, done, total, progress)
        stats = reader.stats
    return replace(
        result, sitemaps=stats.sitemaps, found=stats.found, older=stats.older,
        undated=stats.undated, bad_lastmod=stats.bad_lastmod,
    )


def _queue_chunk(
    state: IndexNowState,
    batch: list[str],
    result: SitemapResult,
    done: int,
    total: int,
    progress: Callable[[int, int], None] | None,
) -> int:
    written = queue_module.enqueue_many(state, batch)
    result.queued += written.queued
    result.unchanged += written.unchanged
    result.rejected_count += len(written.rejected)
    room = REJECTED_KEPT - len(result.rejected)
    if room > 0:
        result.rejected.extend(written.rejected[:room])
    done += len(batch)
    batch.clear()
    if progress is not None:
        progress(min(done, total), total)
    return done
