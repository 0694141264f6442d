"""``flask indexnow sitemap``: the served sitemap written to files, for sites that serve static files.

The documents are the route's, byte for byte: one file while the host's URLs
fit in one, else the index at ``--output`` and its parts beside it, named as
the route names them (``sitemap.xml`` → ``sitemap-1.xml`` …), so the index's
part URLs are where the files are served when the directory is the site's root.
Each part is written when the build finishes it: memory stays flat.
"""

from __future__ import annotations

import gzip
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ConfigurationError
from ..state import IndexNowState
from ..urls import canonical_host
from .build import BuildStats, build_parts, empty_part
from .cache import PartInfo
from .serve import index_document, part_path


@dataclass
class WrittenSitemap:
    """What :func:`write_sitemap_files` wrote."""

    host: str
    files: list[Path] = field(default_factory=list)
    count: int = 0
    stats: BuildStats = field(default_factory=BuildStats)


def site_host(state: IndexNowState, host: str | None) -> str:
    """The host to write: ``host``, else the app's only one (INDEXNOW_BASE_URL, SERVER_NAME or the allow-list)."""
    if host:
        return canonical_host(host.strip().lower())
    base = state.settings.base_url
    if base:
        return canonical_host(base.split("://", 1)[1].split(":", 1)[0])
    allowed = state.settings.allowed_hosts
    if allowed is not None and len(allowed) == 1:
        return next(iter(allowed))
    raise ConfigurationError("name the site with --host (INDEXNOW_BASE_URL is not set and the app may "
                             "submit URLs of more than one host)")


def write_sitemap_files(state: IndexNowState, host: str | None, output: str | os.PathLike[str]) -> WrittenSitemap:
    """Build ``host``'s sitemap and write it at ``output`` (a ``.xml`` path; ``.xml.gz``: compressed)."""
    target = Path(output)
    compressed = target.name.endswith(".xml.gz")
    if not (compressed or target.name.endswith(".xml")):
        raise ConfigurationError(f"--output must name a .xml (or .xml.gz) file, got {str(output)!r}")
    if not target.parent.is_dir():
        raise ConfigurationError(f"--output: the folder {str(target.parent)!r} does not exist")
    name = target.name[: -len(".gz")] if compressed else target.name
    chosen = site_host(state, host)
    written = WrittenSitemap(chosen)
    parts: list[PartInfo] = []
    first: bytes | None = None
    for part in build_parts(state, written.stats, host_for_urls=chosen):
        if part.host != chosen:
            continue
        parts.append(PartInfo(part.number, part.digest, part.count, part.lastmod, part.origin))
        written.count += part.count
        if part.number == 1:
            first = part.gzip  # kept until we know whether there is a second part
            continue
        if first is not None:
            written.files.append(_write(target.parent / _part_name(name, 1, compressed), first, compressed))
            first = None
        written.files.append(_write(target.parent / _part_name(name, part.number, compressed), part.gzip, compressed))
    if not parts:
        empty = empty_part(chosen)
        parts.append(PartInfo(1, empty.digest, 0, None, empty.origin))
        first = empty.gzip
    if len(parts) == 1:
        assert first is not None
        written.files.append(_write(target, first, compressed))
        return written
    # The parts' URLs: INDEXNOW_SITEMAP_URL's folder when the file has its name, else the site's root.
    served = state.settings.sitemap_url
    sitemap_url = served if served and served.rsplit("/", 1)[-1] == name else f"/{name}"
    index = index_document(parts, sitemap_url)
    written.files.insert(0, _write(target, gzip.compress(index, mtime=0), compressed))
    return written


def _part_name(name: str, number: int, compressed: bool) -> str:
    return part_path(name, number).lstrip("/") + (".gz" if compressed else "")


def _write(path: Path, gzipped: bytes, compressed: bool) -> Path:
    """Write atomically (a temporary file renamed): a web server never serves half a sitemap."""
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(gzipped if compressed else gzip.decompress(gzipped))
    temporary.replace(path)
    return path
