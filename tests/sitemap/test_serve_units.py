"""The parts of the served sitemap that need no database: XML text, W3C times, part paths, settings."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import pytest
from lxml import etree  # type: ignore[import-untyped]

from flask_indexnow.config import load_settings
from flask_indexnow.errors import ConfigurationError
from flask_indexnow.sitemap import xmlwrite
from flask_indexnow.sitemap.serve import part_path

from .site import parse_index, parse_urlset


@pytest.mark.parametrize(("url", "loc"), [
    ("https://example.org/a&b?c=1&d='2'", "https://example.org/a&b?c=1&d='2'"),  # XML-escaped, kept
    ("https://example.org/<script>\"", "https://example.org/%3Cscript%3E%22"),
    ("https://example.org/]]>", "https://example.org/%5D%5D%3E"),
    ("https://example.org/a b{|}\\^`", "https://example.org/a%20b%7B%7C%7D%5C%5E%60"),
    ("https://example.org/\x00\x08\x1f\ufffe", "https://example.org/%00%08%1F%EF%BF%BE"),
    ("https://example.org/\ud800x", "https://example.org/%ED%A0%80x"),
    ("https://example.org/é?q=%zz&r=%2F", "https://example.org/%C3%A9?q=%25zz&r=%2F"),
    ("https://[2001:db8::1]/x", "https://[2001:db8::1]/x"),  # the host's brackets stay
])
def test_no_url_can_break_the_document(url: str, loc: str) -> None:
    data = (xmlwrite.URLSET_OPEN + xmlwrite.url_entry(url, None) + xmlwrite.URLSET_CLOSE).encode("utf-8")
    assert parse_urlset(data) == {loc: None}  # parses, and is valid against the schema


def test_w3c_datetimes_are_utc_without_fractions() -> None:
    assert xmlwrite.w3c(datetime(2026, 1, 2, 3, 4, 5, 999, tzinfo=timezone(timedelta(hours=-5)))) == \
        "2026-01-02T08:04:05+00:00"
    assert xmlwrite.w3c(datetime(2026, 1, 2, 3, 4, 5)) == "2026-01-02T03:04:05+00:00"  # naive = UTC
    assert xmlwrite.w3c(date(2026, 1, 2)) == "2026-01-02"


def test_the_index_is_valid_and_escaped() -> None:
    data = xmlwrite.index_document([("https://example.org/s-1.xml?a=1&b=2", datetime(2026, 1, 1, tzinfo=timezone.utc)),
                                    ("https://example.org/s-2.xml", None)])
    assert parse_index(data) == ["https://example.org/s-1.xml?a=1&b=2", "https://example.org/s-2.xml"]
    assert etree.fromstring(data).tag == "{http://www.sitemaps.org/schemas/sitemap/0.9}sitemapindex"


def test_part_paths_sit_beside_the_sitemap() -> None:
    assert part_path("/sitemap.xml", 3) == "/sitemap-3.xml"
    assert part_path("/maps/site.map.xml", 12) == "/maps/site.map-12.xml"


@pytest.mark.parametrize(("config", "words"), [
    ({"INDEXNOW_SITEMAP_URL": "sitemap.xml"}, "must be a path"),
    ({"INDEXNOW_SITEMAP_URL": "/sitemap"}, "ending in '.xml'"),
    ({"INDEXNOW_SITEMAP_URL": "/a b.xml"}, "INDEXNOW_SITEMAP_URL"),
    ({"INDEXNOW_SITEMAP_URL": 3}, "INDEXNOW_SITEMAP_URL"),
    ({"INDEXNOW_SITEMAP_MAX_URLS": 50_001}, "at most 50000"),
    ({"INDEXNOW_SITEMAP_MAX_URLS": 0}, "at least 1"),
    ({"INDEXNOW_SITEMAP_CACHE_SECONDS": -1}, "at least 0"),
    ({"INDEXNOW_SITEMAP_CACHE_SECONDS": "soon"}, "must be a number"),
])
def test_bad_settings_fail_naming_the_key(config: dict[str, object], words: str) -> None:
    with pytest.raises(ConfigurationError, match=words):
        load_settings(dict(config))


def test_settings_and_their_defaults() -> None:
    default = load_settings({})
    assert (default.sitemap_url, default.sitemap_max_urls, default.sitemap_cache_seconds) == (None, 50_000, 300)
    given = load_settings({"INDEXNOW_SITEMAP_URL": " /sitemaps/all.xml ", "INDEXNOW_SITEMAP_MAX_URLS": "1000",
                           "INDEXNOW_SITEMAP_CACHE_SECONDS": 0})
    assert (given.sitemap_url, given.sitemap_max_urls, given.sitemap_cache_seconds) == ("/sitemaps/all.xml", 1000, 0)


def test_watch_refuses_bad_sitemap_options() -> None:
    from flask_indexnow import IndexNow

    class Thing:
        pass

    with pytest.raises(TypeError, match="sitemap= must be True or False"):
        IndexNow().watch(Thing, url=lambda t: "https://example.org/", sitemap="no")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="lastmod= must be a function"):
        IndexNow().watch(Thing, url=lambda t: "https://example.org/", lastmod="updated_at")  # type: ignore[arg-type]
