"""One sitemap document on disk: unwrapped, capped and parsed as a stream.

A sitemap is untrusted input, and XML has well-known ways to hurt the reader
(entity expansion bombs, external entities that read local files or reach
internal hosts). So the document is parsed with :mod:`defusedxml`, fed in
chunks into a target that keeps only ``<loc>`` and ``<lastmod>`` (no tree at
all), and refused whole if it declares a DTD or any entity. Gzip layers are
unwrapped by their magic bytes and the output is capped, so a gzip bomb stops
at :data:`~.limits.MAX_SITEMAP_BYTES`.
"""

from __future__ import annotations

import gzip
import os
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from defusedxml import DTDForbidden, EntitiesForbidden, ExternalReferenceForbidden
from defusedxml.ElementTree import DefusedXMLParser, ParseError

from .limits import (
    MAX_SITEMAP_BYTES,
    MAX_XML_DEPTH,
    MAX_XML_NAMES,
    MAX_XML_RUN,
    READ_SIZE,
    SITEMAP_NS,
    SitemapError,
    too_big,
)

_GZIP_MAGIC = b"\x1f\x8b"
_FIELD_MAX = 4096  # longer <loc>/<lastmod> text is cut; such a URL is rejected anyway


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
                raise too_big(label, max_bytes)  # plain and too big: no need to read it
            while True:
                chunk = stream.read(min(READ_SIZE, max_bytes - total + 1))
                if not chunk:
                    return
                total += len(chunk)
                if total > max_bytes:
                    raise too_big(label, max_bytes)
                yield chunk
        except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
            raise SitemapError(f"{label} is not a valid gzip file ({exc or 'truncated'})") from None
        except OSError as exc:
            raise SitemapError(f"cannot read {label}: {exc.strerror or exc}") from None



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
        self._names: set[str] = set()

    def start(self, tag: str, attrib: dict[str, str]) -> None:
        self._depth += 1
        if self._depth > MAX_XML_DEPTH:
            raise SitemapError(
                f"{self.label} nests elements more than {MAX_XML_DEPTH} levels deep: refused whole "
                "(a sitemap needs 3; deep nesting only serves to exhaust memory)"
            )
        if tag not in self._names or attrib:
            self._names.add(tag)
            self._names.update(attrib)
            if len(self._names) > MAX_XML_NAMES:
                raise SitemapError(
                    f"{self.label} uses more than {MAX_XML_NAMES} different element and attribute names: "
                    "refused whole (a sitemap uses a few dozen)"
                )
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
    fed = 0
    try:
        for chunk in chunks:
            parser.feed(chunk)
            fed += len(chunk)
            # What expat holds unparsed is one token it has not seen the end of yet (a tag with its
            # attributes, a comment, a name): it is buffered whole, so a giant one is refused here.
            if fed - parser.parser.CurrentByteIndex > MAX_XML_RUN:
                raise SitemapError(
                    f"{label} has a tag, comment or name longer than {MAX_XML_RUN // 1024} KB: refused whole"
                )
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
