"""One sitemap build, shared by every process through the extension's cache.

A build (:mod:`.build`) covers every host at once and is kept in the cache: a
manifest (each host's parts: digest, count, lastmod) and each part's gzip
bytes under its digest. Every process reads the same entries (with Redis),
and a cache ``add`` lets one process build while the others wait for its
manifest, so a crawler storm costs one build. Parts are addressed by content:
a manifest never points at another build's bytes, and an unchanged part keeps
its ETag across builds.

A build is fresh for INDEXNOW_SITEMAP_CACHE_SECONDS and kept :data:`KEEP_FACTOR`
times as long: a request that finds it stale is answered from it at once, and
the new build runs after that response (``call_on_close``), so only the very
first request of a site (nothing cached) waits for a build. Without a usable
cache, or with 0 seconds, each request builds (and keeps only the part it needs).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from flask import Flask, after_this_request, g

from .. import clock
from ..breaker import CacheUnavailable
from ..state import IndexNowState, current_app_object
from .build import BuildStats, Part, build_parts, empty_part

logger = logging.getLogger(__name__)

#: How long a process waits for another one's build before it builds itself (seconds).
BUILD_WAIT = 30.0
#: How long the build lock lives at most (a process that died while building frees it then).
BUILD_LOCK_SECONDS = 600
#: A build is served stale (while the next one is made) up to this many cache times after it was made.
KEEP_FACTOR = 3
_POLL = 0.2
_locks: dict[int, threading.Lock] = {}
_locks_guard = threading.Lock()


@dataclass(frozen=True)
class PartInfo:
    """What the manifest keeps of one part."""

    number: int
    digest: str
    count: int
    lastmod: datetime | None
    origin: str


@dataclass
class HostSitemap:
    """One host's sitemap as the last build left it, and the bytes of the part asked for (if any)."""

    host: str
    parts: list[PartInfo]
    #: The gzip bytes of the part asked for, and its digest.
    wanted: bytes | None = None
    wanted_digest: str | None = None
    #: Older than INDEXNOW_SITEMAP_CACHE_SECONDS (served while the next build is made).
    stale: bool = False


def load(state: IndexNowState, host: str, number: int) -> HostSitemap:
    """``host``'s sitemap and the gzip bytes of part ``number``, from the cache or a build."""
    seconds = state.settings.sitemap_cache_seconds
    if seconds > 0:
        found = _from_cache(state, host, number)
        if found is not None:
            if found.stale:
                _rebuild_after_response(state)
            return found
        with _lock_of(state):
            found = _from_cache(state, host, number)  # built by another thread meanwhile
            if found is not None:
                return found
            if not _take_build_lock(state):
                found = _wait_for_build(state, host, number)
                if found is not None:
                    return found
            try:
                return _build(state, host, number, store=True)
            finally:
                _cache_call(state, "delete", state.cache_key("sitemap:building"))
    return _build(state, host, number, store=False)


def _rebuild_after_response(state: IndexNowState) -> None:
    """Arrange one new build after the current response is sent (once per request, one process at a time)."""
    if g.get("_indexnow_sitemap_rebuild"):
        return
    g._indexnow_sitemap_rebuild = True
    app = current_app_object()

    @after_this_request
    def schedule(response: Any) -> Any:
        response.call_on_close(lambda: _rebuild(app))
        return response


def _rebuild(app: Flask) -> None:
    """The build after a stale answer; never raises into the server (a failure is logged)."""
    state: IndexNowState = app.extensions["indexnow"]
    try:
        with app.app_context(), _lock_of(state):
            if not _take_build_lock(state):
                return  # another process is building it
            try:
                _build(state, "", 0, store=True)
            finally:
                _cache_call(state, "delete", state.cache_key("sitemap:building"))
    except Exception as exc:
        state.quiet_log.log("sitemap-build", logging.ERROR, "IndexNow: the sitemap could not be built", exc=exc)


def summary(state: IndexNowState) -> dict[str, Any] | None:
    """What the status page shows: each host's sitemap URL and URL count, from the last cached build (no build).

    None when no sitemap is served. ``hosts`` is empty and ``built_at`` None
    while no build is cached (the first request for the sitemap makes one).
    """
    url = state.settings.sitemap_url
    if url is None:
        return None
    manifest = _cache_call(state, "get", state.cache_key("sitemap:manifest"))
    if not isinstance(manifest, dict):
        return {"path": url, "hosts": [], "built_at": None}
    hosts = [{"host": host, "url": f"{parts[0][4]}{url}", "count": sum(int(p[2]) for p in parts),
              "parts": len(parts)} for host, parts in sorted(manifest.get("hosts", {}).items()) if parts]
    built = manifest.get("built_at")
    return {"path": url, "hosts": hosts, "built_at": datetime.fromisoformat(built) if built else None}


def _build(state: IndexNowState, host: str, number: int, *, store: bool) -> HostSitemap:
    seconds = state.settings.sitemap_cache_seconds * KEEP_FACTOR
    stats = BuildStats()
    started = time.monotonic()
    hosts: dict[str, list[list[Any]]] = {}
    sitemap = HostSitemap(host, [])
    for part in build_parts(state, stats):
        hosts.setdefault(part.host, []).append(_info_row(part))
        if store:
            _cache_call(state, "set", state.cache_key(f"sitemap:part:{part.digest}"), part.gzip, timeout=seconds)
        if part.host == host:
            sitemap.parts.append(_info(part))
            if part.number == number:
                _keep(sitemap, part)
    if not sitemap.parts:
        part = empty_part(host)
        sitemap.parts.append(_info(part))
        if number == 1:
            _keep(sitemap, part)
    if store:
        manifest = {"built_at": clock.utcnow().isoformat(), "hosts": hosts}
        _cache_call(state, "set", state.cache_key("sitemap:manifest"), manifest, timeout=seconds)
    logger.info("IndexNow: sitemap built in %.2fs: %d rows read, %d URLs listed over %d host(s); "
                "%d not live or not yet published, %d refused by the URL rules, %d failed",
                time.monotonic() - started, stats.rows, stats.listed, len(stats.hosts), stats.not_due,
                stats.refused, stats.failed)
    return sitemap


def _from_cache(state: IndexNowState, host: str, number: int) -> HostSitemap | None:
    manifest = _cache_call(state, "get", state.cache_key("sitemap:manifest"))
    if not isinstance(manifest, dict):
        return None
    built = manifest.get("built_at")
    age = (clock.utcnow() - datetime.fromisoformat(built)).total_seconds() if isinstance(built, str) else None
    stale = age is None or not 0 <= age <= state.settings.sitemap_cache_seconds
    rows = manifest.get("hosts", {}).get(host)
    if not rows:
        part = empty_part(host)
        sitemap = HostSitemap(host, [_info(part)], stale=stale)
        if number == 1:
            _keep(sitemap, part)
        return sitemap
    sitemap = HostSitemap(host, [_from_row(row) for row in rows], stale=stale)
    if 1 <= number <= len(sitemap.parts):
        info = sitemap.parts[number - 1]
        data = _cache_call(state, "get", state.cache_key(f"sitemap:part:{info.digest}"))
        if not isinstance(data, bytes):
            return None  # evicted: build again
        sitemap.wanted = data
        sitemap.wanted_digest = info.digest
    return sitemap


def _wait_for_build(state: IndexNowState, host: str, number: int) -> HostSitemap | None:
    """Another process is building: wait for its manifest (at most :data:`BUILD_WAIT` seconds)."""
    deadline = time.monotonic() + BUILD_WAIT
    while time.monotonic() < deadline:
        time.sleep(_POLL)
        found = _from_cache(state, host, number)
        if found is not None:
            return found
        if _cache_call(state, "get", state.cache_key("sitemap:building")) is None:
            # The lock is gone: the build finished between the two reads, or it gave up
            # (or the cache is gone), and then this process builds.
            return _from_cache(state, host, number)
    return None


def _take_build_lock(state: IndexNowState) -> bool:
    """True when this process may build (it holds the lock, or the cache cannot hold one)."""
    try:
        return state.guarded_cache.add(state.cache_key("sitemap:building"), 1, timeout=BUILD_LOCK_SECONDS)
    except CacheUnavailable:
        return True


def _cache_call(state: IndexNowState, name: str, *args: Any, **kwargs: Any) -> Any:
    """A cache call that never fails the request: a cache that is down means building without it."""
    try:
        return getattr(state.guarded_cache, name)(*args, **kwargs)
    except CacheUnavailable:
        return None


def _lock_of(state: IndexNowState) -> threading.Lock:
    with _locks_guard:
        return _locks.setdefault(id(state), threading.Lock())


def _keep(sitemap: HostSitemap, part: Part) -> None:
    sitemap.wanted = part.gzip
    sitemap.wanted_digest = part.digest


def _info(part: Part) -> PartInfo:
    return PartInfo(part.number, part.digest, part.count, part.lastmod, part.origin)


def _info_row(part: Part) -> list[Any]:
    """A part as the cached manifest keeps it (plain values: every cache can store them)."""
    return [part.number, part.digest, part.count, part.lastmod.isoformat() if part.lastmod else None, part.origin]


def _from_row(row: list[Any]) -> PartInfo:
    return PartInfo(row[0], row[1], row[2], datetime.fromisoformat(row[3]) if row[3] else None, row[4])
