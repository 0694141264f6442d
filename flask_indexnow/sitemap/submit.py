"""Queueing every URL of a sitemap, all or nothing per document, in chunks.

:func:`submit_sitemap` reads everything once to validate and count it before
it writes a single row (a broken document queues nothing), then reads it again
from local copies and queues it through :func:`~flask_indexnow.queue.enqueue_many`
in chunks, so memory stays flat whatever the sitemap's size and no transaction
spans the whole sitemap.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from datetime import date, datetime

import sqlalchemy as sa

from .. import claims
from .. import queue as queue_module
from ..errors import IndexNowError
from ..state import IndexNowState
from .limits import CHUNK, REJECTED_KEPT
from .reader import ReadStats, SitemapReader


@dataclass
class SitemapResult(ReadStats):
    """What :func:`submit_sitemap` did: what was read, and what was queued of it."""

    queued: int = 0
    unchanged: int = 0
    rejected_count: int = 0
    #: The first :data:`REJECTED_KEPT` rejected URLs with the reason.
    rejected: list[tuple[str, str]] = field(default_factory=list)


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
    queue_table = state.models.queue
    # Missing tables fail now, not after the download; a lock held a moment is waited out (issue 18).
    claims.run(state.engine(), lambda connection: connection.execute(sa.select(queue_table.c.id).limit(1)).all())
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
    return replace(result, **asdict(stats))


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
