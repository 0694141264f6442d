"""Building the served sitemap from the watched models, streamed: memory stays flat at any size.

Each watched model (``watch(..., sitemap=False)`` opts out) is read in
primary-key order, :data:`CHUNK` rows at a time (keyset pagination: no
server-side cursor, no long transaction, a fresh session per chunk so no
object outlives its chunk). A row is listed when an ``update`` of it would be
sent now: the watcher's own rule (:meth:`Adapter.is_due`: live, publication
time reached), its URL built as the watcher builds it (in the request context
of INDEXNOW_BASE_URL when set, :mod:`flask_indexnow.watching.baseurl`), then
accepted by the queue's URL rules and allow-list (:func:`flask_indexnow.urls.check_url`).

One build covers every host found in the data at once (a sitemap per host,
each in its own parts), so the Host header of a request can choose a site but
never cause a build: the hosts come from the database, not from the request.
Parts are written into gzip as they fill, and handed to the caller one by one.
"""

from __future__ import annotations

import hashlib
import logging
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Session

from .. import clock
from ..errors import InvalidURLError
from ..models import url_hash
from ..state import IndexNowState
from ..urls import check_url
from ..watching import baseurl
from ..watching.events import Adapter
from . import xmlwrite
from .changes import change_times, has_open_updates

logger = logging.getLogger(__name__)

#: Rows read per query, and URLs whose change times are looked up together.
CHUNK = 1000


@dataclass
class Part:
    """One finished sitemap file of one host: its gzip bytes and what describes it."""

    host: str
    number: int
    gzip: bytes
    #: SHA-256 (hex, 32 characters) of the uncompressed document: the ETag.
    digest: str
    count: int
    size: int
    #: The latest lastmod in the part (None: none known).
    lastmod: datetime | None
    #: ``scheme://host[:port]`` of its first URL (where the index's part URLs point).
    origin: str


@dataclass
class _Open:
    """A part being written."""

    host: str
    number: int
    origin: str
    compressor: Any = field(default_factory=lambda: zlib.compressobj(6, zlib.DEFLATED, 31))
    hasher: Any = field(default_factory=hashlib.sha256)
    chunks: list[bytes] = field(default_factory=list)
    count: int = 0
    size: int = 0
    lastmod: datetime | None = None
    seen: set[str] = field(default_factory=set)

    def write(self, data: str) -> None:
        raw = data.encode("utf-8")
        self.hasher.update(raw)
        self.size += len(raw)
        out = self.compressor.compress(raw)
        if out:
            self.chunks.append(out)

    def close(self) -> Part:
        self.write(xmlwrite.URLSET_CLOSE)
        self.chunks.append(self.compressor.flush())
        return Part(self.host, self.number, b"".join(self.chunks), self.hasher.hexdigest()[:32], self.count,
                    self.size, self.lastmod, self.origin)


@dataclass
class BuildStats:
    """What a build read and left out (for the log line and the tests)."""

    rows: int = 0
    listed: int = 0
    not_due: int = 0
    refused: int = 0
    failed: int = 0
    hosts: dict[str, int] = field(default_factory=dict)


def build_parts(state: IndexNowState, stats: BuildStats | None = None, *,
                host_for_urls: str | None = None) -> Iterator[Part]:
    """Every host's sitemap parts, each yielded as soon as it is full, the last one of each host at the end.

    A host with no URL yields nothing: its sitemap is the empty one
    (:func:`empty_part`). ``host_for_urls`` (the CLI's ``--host``, outside a
    request) is the origin ``url=`` functions are built in when
    INDEXNOW_BASE_URL is not set.
    """
    stats = stats if stats is not None else BuildStats()
    settings = state.settings
    max_urls = settings.sitemap_max_urls
    limit_bytes = xmlwrite.MAX_BYTES - len(xmlwrite.URLSET_CLOSE)
    open_parts: dict[str, _Open] = {}
    numbers: dict[str, int] = {}
    now = clock.utcnow()
    for adapter_model, adapter in list(state.extension.adapters.items()):
        if not adapter.sitemap:
            continue
        for entries in _model_entries(state, adapter_model, adapter, now, stats, host_for_urls):
            for host, origin, url, lastmod in entries:
                current = open_parts.get(host)
                if current is not None and url in current.seen:
                    continue  # two rows with one URL (within a part; see docs/sitemaps.md)
                line = xmlwrite.url_entry(url, lastmod)  # ASCII (xmlwrite.uri): its length is its size
                if current is not None and (current.count >= max_urls or current.size + len(line) > limit_bytes):
                    yield current.close()
                    current = None
                if current is None:
                    numbers[host] = numbers.get(host, 0) + 1
                    current = open_parts[host] = _Open(host, numbers[host], origin)
                    current.write(xmlwrite.URLSET_OPEN)
                current.write(line)
                current.seen.add(url)
                current.count += 1
                stats.listed += 1
                stats.hosts[host] = stats.hosts.get(host, 0) + 1
                if lastmod is not None:
                    when = clock.as_utc(lastmod)
                    if current.lastmod is None or when > current.lastmod:
                        current.lastmod = when
    for host in sorted(open_parts):
        yield open_parts[host].close()


def empty_part(host: str) -> Part:
    """The sitemap of a host without URLs: an empty ``<urlset>`` (valid, and says so)."""
    part = _Open(host, 1, f"https://{host}")
    part.write(xmlwrite.URLSET_OPEN)
    return part.close()


Entry = tuple[str, str, str, "datetime | date | None"]


def _model_entries(state: IndexNowState, model: type, adapter: Adapter, now: datetime, stats: BuildStats,
                   host_for_urls: str | None) -> Iterator[list[Entry]]:
    """The listed URLs of ``model``, a chunk at a time: (host, origin, url, lastmod)."""
    try:
        mapper: Any = sa.inspect(model)
    except sa.exc.NoInspectionAvailable:
        return  # watched for signals only: no table to read
    keys = list(mapper.primary_key)
    db = state.db
    bind = db.session.get_bind(mapper=mapper)
    origin = state.settings.base_url or (f"https://{host_for_urls}" if host_for_urls else None)
    allowed = state.settings.allowed_hosts
    last: tuple[Any, ...] | None = None
    with bind.connect() as connection:
        queue_too = has_open_updates(connection, state)
    while True:
        statement: Any = sa.select(model).order_by(*keys).limit(CHUNK)
        if last is not None:
            statement = statement.where(
                keys[0] > last[0] if len(keys) == 1 else sa.tuple_(*keys) > sa.tuple_(*last))
        with Session(bind) as session:
            objects = list(session.scalars(statement))
            if not objects:
                return
            last = tuple(mapper.primary_key_from_instance(objects[-1]))
            stats.rows += len(objects)
            hint = "" if origin else " (set INDEXNOW_BASE_URL to build URLs outside requests)"
            if origin is not None:
                with baseurl.canonical_request(origin):
                    found = _read(adapter, objects, now, stats, allowed, hint)
            else:
                found = _read(adapter, objects, now, stats, allowed, hint)
            yield _with_lastmod(state, session, found, queue_too)


def _read(adapter: Adapter, objects: list[Any], now: datetime, stats: BuildStats,
          allowed: Any, hint: str) -> list[tuple[str, str, str, Any, bool]]:
    """(host, origin, url, lastmod, lastmod given) of each object listed; the rest counted."""
    found = []
    for obj in objects:
        try:
            if not adapter.is_due(obj, now):
                stats.not_due += 1
                continue
            url = adapter.url(obj)
            lastmod = adapter.lastmod(obj) if adapter.lastmod is not None else None
        except Exception as exc:  # one bad row must not take the whole sitemap down
            stats.failed += 1
            if stats.failed == 1:  # once per build: a broken url= function fails every row alike
                logger.warning("IndexNow: sitemap: %s left out: %s%s", type(obj).__name__,
                               str(exc).splitlines()[0] if str(exc) else type(exc).__name__, hint)
            continue
        if not url:
            stats.not_due += 1
            continue
        try:
            checked = check_url(url, allowed)
        except InvalidURLError:
            stats.refused += 1
            continue
        if lastmod is not None and not isinstance(lastmod, (datetime, date)):
            lastmod = None  # not a time: left out rather than written wrong
        stored = checked.url
        end = stored.find("/", stored.find("//") + 2)
        found.append((checked.host, stored if end < 0 else stored[:end], stored, lastmod, adapter.lastmod is not None))
    return found


def _with_lastmod(state: IndexNowState, session: Session, found: list[tuple[str, str, str, Any, bool]],
                  queue_too: bool) -> list[Entry]:
    """Fill in the last change seen for URLs whose model has no ``lastmod=`` function.

    With INDEXNOW_VERIFY, a URL whose last verdict says the pass would not send
    it (noindex, canonical, redirect, robots, gone) is left out.
    """
    digests = [url_hash(url) for _host, _origin, url, _lastmod, _given in found]
    verifying = state.settings.verify is not None
    wanted = [(item[0], digest) for item, digest in zip(found, digests) if verifying or not item[4]]
    withheld: set[tuple[str, str]] | None = set() if verifying else None
    times = change_times(session.connection(), state, wanted, queue_too=queue_too,
                         withheld=withheld) if wanted else {}
    entries: list[Entry] = []
    for (host, origin, url, lastmod, given), digest in zip(found, digests):
        if withheld and (host, digest) in withheld:
            continue
        if not given:
            lastmod = times.get((host, digest))
        entries.append((host, origin, url, lastmod))
    return entries
