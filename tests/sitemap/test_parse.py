"""Reading sitemaps: formats, indexes, dates and everything that is refused. No app, no database."""

from __future__ import annotations

import gzip
import tracemalloc
from datetime import date, datetime, timezone
from pathlib import Path

import pytest

from flask_indexnow.sitemap import (
    MAX_SITEMAP_BYTES,
    SitemapError,
    SitemapReader,
    parse_since,
    parse_w3c_datetime,
    read_sitemap,
)

from .helpers import BILLION_LAUGHS, DTD_ONLY, NS, external_entity, index, urlset

UTC = timezone.utc


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def urls(source: object, since: object = None, **options: object) -> list[str]:
    return [entry.url for entry in read_sitemap(source, since, **options)]  # type: ignore[arg-type]


# -- what is read ---------------------------------------------------------------------------


def test_urlset_entries_with_lastmod(tmp_path):
    doc = f"""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="{NS}" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
  <url>
    <loc>  https://example.com/a?x=1&amp;y=2  </loc>
    <lastmod>2024-05-01T10:30:00+02:00</lastmod>
    <changefreq>daily</changefreq>
    <image:image><image:loc>https://example.com/picture.png</image:loc></image:image>
  </url>
  <url><loc>https://example.com/b</loc></url>
</urlset>""".encode()
    entries = list(read_sitemap(write(tmp_path / "sitemap.xml", doc)))
    assert [e.url for e in entries] == ["https://example.com/a?x=1&y=2", "https://example.com/b"]
    assert entries[0].lastmod == datetime(2024, 5, 1, 8, 30, tzinfo=UTC)
    assert entries[1].lastmod is None


def test_no_namespace_is_accepted(tmp_path):
    path = write(tmp_path / "plain.xml", urlset("https://example.com/a", ns=None))
    assert urls(path) == ["https://example.com/a"]


def test_index_follows_local_children(tmp_path):
    write(tmp_path / "posts.xml", urlset("https://example.com/p1", "https://example.com/p2"))
    with gzip.open(tmp_path / "pages.xml.gz", "wb") as f:
        f.write(urlset("https://example.com/about"))
    root = write(tmp_path / "index.xml", index("https://example.com/posts.xml", "https://example.com/pages.xml.gz"))
    reader = SitemapReader(root)
    assert [e.url for e in reader] == ["https://example.com/p1", "https://example.com/p2", "https://example.com/about"]
    assert reader.stats.sitemaps == 3
    assert reader.stats.found == 3


def test_index_loops_are_read_once(tmp_path):
    write(tmp_path / "a.xml", index("https://example.com/b.xml", "https://example.com/a.xml", "https://example.com/c.xml"))
    write(tmp_path / "b.xml", index("https://example.com/a.xml", "https://example.com/c.xml"))
    write(tmp_path / "c.xml", urlset("https://example.com/c"))
    reader = SitemapReader(tmp_path / "a.xml")
    assert [e.url for e in reader] == ["https://example.com/c"]
    assert reader.stats.sitemaps == 3


def test_index_nesting_is_bounded(tmp_path):
    for level in range(5):
        write(tmp_path / f"i{level}.xml", index(f"https://example.com/i{level + 1}.xml"))
    write(tmp_path / "i5.xml", urlset("https://example.com/deep"))
    with pytest.raises(SitemapError, match="nested more than 3 levels"):
        urls(tmp_path / "i0.xml")
    assert urls(tmp_path / "i2.xml") == ["https://example.com/deep"]


def test_missing_child_without_url_is_an_error(tmp_path):
    root = write(tmp_path / "index.xml", index("nowhere.xml"))
    with pytest.raises(SitemapError, match="neither next to it nor an http"):
        urls(root)


def test_gzip_is_detected_by_magic_bytes_not_name(tmp_path):
    data = urlset("https://example.com/z")
    (tmp_path / "looks-plain.xml").write_bytes(gzip.compress(data))
    (tmp_path / "real.xml.gz").write_bytes(gzip.compress(data))
    (tmp_path / "twice.xml.gz").write_bytes(gzip.compress(gzip.compress(data)))
    (tmp_path / "plain.xml.gz").write_bytes(data)  # misnamed, but plain
    for name in ("looks-plain.xml", "real.xml.gz", "twice.xml.gz", "plain.xml.gz"):
        assert urls(tmp_path / name) == ["https://example.com/z"], name


def _peak_memory(path: Path) -> tuple[int, int]:
    tracemalloc.start()
    try:
        count = sum(1 for _ in read_sitemap(path))
        return count, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _big_sitemap(path: Path, count: int) -> Path:
    with open(path, "wb") as f:
        f.write(f'<urlset xmlns="{NS}">'.encode())
        for n in range(count):
            f.write(f"<url><loc>https://example.com/page/{n}</loc><lastmod>2024-01-01</lastmod></url>\n".encode())
        f.write(b"</urlset>")
    return path


@pytest.mark.slow  # two parses of large documents in fresh processes: not the fast tier
def test_memory_stays_flat_as_the_sitemap_grows(tmp_path):
    small = _big_sitemap(tmp_path / "small.xml", 1_000)
    large = _big_sitemap(tmp_path / "large.xml", 12_000)
    count_small, peak_small = _peak_memory(small)
    count_large, peak_large = _peak_memory(large)
    assert (count_small, count_large) == (1_000, 12_000)
    assert peak_large < peak_small * 1.5 + 64 * 1024, (peak_small, peak_large)
    assert peak_large < large.stat().st_size / 2  # streaming: well under the document itself


# -- dates and --since ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("2024", datetime(2024, 1, 1, tzinfo=UTC), datetime(2024, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)),
        ("2024-02", datetime(2024, 2, 1, tzinfo=UTC), datetime(2024, 2, 29, 23, 59, 59, 999999, tzinfo=UTC)),
        ("2024-12", datetime(2024, 12, 1, tzinfo=UTC), datetime(2024, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)),
        ("2024-03-05", datetime(2024, 3, 5, tzinfo=UTC), datetime(2024, 3, 5, 23, 59, 59, 999999, tzinfo=UTC)),
        ("2024-03-05T10:20Z", datetime(2024, 3, 5, 10, 20, tzinfo=UTC), datetime(2024, 3, 5, 10, 20, 59, 999999, tzinfo=UTC)),
        ("2024-03-05T10:20:30+01:00", datetime(2024, 3, 5, 9, 20, 30, tzinfo=UTC),
         datetime(2024, 3, 5, 9, 20, 30, 999999, tzinfo=UTC)),
        ("2024-03-05T10:20:30.25-05:30", datetime(2024, 3, 5, 15, 50, 30, 250000, tzinfo=UTC),
         datetime(2024, 3, 5, 15, 50, 30, 250000, tzinfo=UTC)),
        ("2024-03-05T10:20:30", datetime(2024, 3, 5, 10, 20, 30, tzinfo=UTC),
         datetime(2024, 3, 5, 10, 20, 30, 999999, tzinfo=UTC)),  # no zone: UTC
    ],
)
def test_w3c_datetime_formats(text, start, end):
    assert parse_w3c_datetime(text) == (start, end)


@pytest.mark.parametrize("text", ["", "yesterday", "2024-13-01", "2024-02-30", "24-01-01", "2024/01/01",
                                  "2024-01-01T25:00Z", "2024-01-01T10:00+25:00", "0000-01-01", "2024-1-1"])
def test_unreadable_dates(text):
    assert parse_w3c_datetime(text) is None


def test_parse_since():
    assert parse_since(None) is None
    assert parse_since("2024-06-01") == datetime(2024, 6, 1, tzinfo=UTC)
    assert parse_since(date(2024, 6, 1)) == datetime(2024, 6, 1, tzinfo=UTC)
    assert parse_since(datetime(2024, 6, 1, 12)) == datetime(2024, 6, 1, 12, tzinfo=UTC)  # naive = UTC
    assert parse_since("2024-06-01T12:00:00+02:00") == datetime(2024, 6, 1, 10, tzinfo=UTC)
    with pytest.raises(ValueError, match="cannot read 'last week'"):
        parse_since("last week")


def test_since_filters_on_lastmod_and_keeps_undated(tmp_path):
    path = write(tmp_path / "s.xml", urlset(
        ("https://example.com/old", "2024-05-31"),
        ("https://example.com/same-day", "2024-06-01"),
        ("https://example.com/new", "2024-06-02T08:00:00Z"),
        ("https://example.com/month", "2024-06"),        # may be after the 1st: kept
        ("https://example.com/last-year", "2023"),
        ("https://example.com/zone", "2024-06-01T01:00:00+02:00"),  # 2024-05-31T23:00Z
        ("https://example.com/bad", "not a date"),
        "https://example.com/none",
    ))
    reader = SitemapReader(path, "2024-06-01")
    assert [e.url for e in reader] == [
        "https://example.com/same-day", "https://example.com/new", "https://example.com/month",
        "https://example.com/bad", "https://example.com/none",
    ]
    stats = reader.stats
    assert (stats.found, stats.older, stats.undated, stats.bad_lastmod) == (8, 3, 2, 1)


def test_without_since_every_entry_is_kept(tmp_path):
    path = write(tmp_path / "s.xml", urlset(("https://example.com/a", "garbage"), ("https://example.com/b", "2001")))
    reader = SitemapReader(path)
    assert [(e.url, e.lastmod) for e in reader] == [
        ("https://example.com/a", None), ("https://example.com/b", datetime(2001, 1, 1, tzinfo=UTC)),
    ]
    assert (reader.stats.undated, reader.stats.bad_lastmod) == (0, 1)


# -- what is refused ---------------------------------------------------------------------------------


def test_entity_bomb_is_refused_whole(tmp_path):
    path = write(tmp_path / "bomb.xml", BILLION_LAUGHS)
    with pytest.raises(SitemapError, match="declares the entity 'lol'.*refused whole"):
        urls(path)  # refused at the first declaration, before anything is expanded


def test_external_entity_is_refused_and_never_read(tmp_path):
    secret = write(tmp_path / "secret.txt", b"TOP-SECRET")
    path = write(tmp_path / "xxe.xml", external_entity(secret.as_uri()))
    with pytest.raises(SitemapError, match="declares an external entity") as info:
        urls(path)
    assert "TOP-SECRET" not in str(info.value)


def test_dtd_is_refused_whole(tmp_path):
    with pytest.raises(SitemapError, match=r"declares a DTD \(<!DOCTYPE urlset>\): refused whole"):
        urls(write(tmp_path / "dtd.xml", DTD_ONLY))


def test_html_page_is_refused(tmp_path):
    page = b"<!DOCTYPE html><html><head><title>Not found</title></head><body></body></html>"
    with pytest.raises(SitemapError, match="is an HTML page, not a sitemap"):
        urls(write(tmp_path / "page.xml", page))


def test_over_50_mb_is_refused(tmp_path):
    path = tmp_path / "huge.xml"
    with open(path, "wb") as f:
        f.write(urlset("https://example.com/a")[:-11])  # without </urlset>
        f.truncate(MAX_SITEMAP_BYTES + 1)  # sparse: instant to make
    with pytest.raises(SitemapError, match="larger than 50 MB uncompressed"):
        urls(path)
    exactly = tmp_path / "exactly.xml"
    body = urlset("https://example.com/a")
    with open(exactly, "wb") as f:
        f.write(body[:-len(b"</urlset>\n")])
        f.write(b" " * (MAX_SITEMAP_BYTES - len(body)))
        f.write(b"</urlset>\n")
    assert exactly.stat().st_size == MAX_SITEMAP_BYTES
    assert urls(exactly) == ["https://example.com/a"]  # the limit itself is allowed


def test_gzip_bomb_is_refused_at_the_cap(tmp_path):
    path = tmp_path / "bomb.xml.gz"
    head = urlset("https://example.com/a")[:-11]
    with gzip.open(path, "wb", compresslevel=1) as f:
        f.write(head)
        block = b" " * (1024 * 1024)
        for _ in range(52):
            f.write(block)
        f.write(b"</urlset>")
    assert path.stat().st_size < 1024 * 1024  # small on disk, 52 MB inside
    with pytest.raises(SitemapError, match="larger than 50 MB uncompressed"):
        urls(path)


def test_small_cap_counts_decompressed_bytes(tmp_path):
    path = tmp_path / "s.xml.gz"
    path.write_bytes(gzip.compress(urlset(*(f"https://example.com/{n}" for n in range(100)))))
    with pytest.raises(SitemapError, match="larger than"):
        urls(path, max_bytes=2000)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (urlset("https://example.com/a", ns="http://www.google.com/schemas/sitemap/0.84"),
         "uses the XML namespace 'http://www.google.com/schemas/sitemap/0.84'; a sitemap must use"),
        (urlset("https://example.com/a", ns="https://www.sitemaps.org/schemas/sitemap/0.9"), "uses the XML namespace"),
        (b'<?xml version="1.0"?><rss version="2.0"><channel/></rss>', "root element is <rss>"),
        (b"https://example.com/a\nhttps://example.com/b\n", "is not valid XML"),
        (b'{"urls": []}', "is not valid XML"),
        (b"", "is not valid XML: no element found"),
        (urlset("https://example.com/a")[:-5], "is not valid XML"),
        (b"\x1f\x8bnot really gzip", "is not a valid gzip file"),
        (gzip.compress(urlset("https://example.com/a"))[:-12], "is not a valid gzip file"),
    ],
)
def test_documents_that_are_not_sitemaps(tmp_path, data, message):
    with pytest.raises(SitemapError, match=message.replace("(", r"\(").replace(".", r"\.")):
        urls(write(tmp_path / "doc.xml", data))


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(SitemapError, match="no such file"):
        urls(tmp_path / "nope.xml")
    with pytest.raises(SitemapError, match="is a directory"):
        urls(tmp_path)
    with pytest.raises(SitemapError, match="only http"):
        urls("ftp://example.com/sitemap.xml")
    with pytest.raises(SitemapError, match="for a URL, write https://example.com/sitemap.xml"):
        urls("example.com/sitemap.xml")
