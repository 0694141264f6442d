"""Queueing a sitemap's URLs in bulk, on every database backend."""

from __future__ import annotations

import pytest

from flask_indexnow.errors import IndexNowError
from flask_indexnow.sitemap import REJECTED_KEPT, SitemapError, submit_sitemap
from flask_indexnow.state import get_state

from ..conftest import rows
from ..file_server import File
from .helpers import BILLION_LAUGHS, index, urlset


def queued_urls(app):
    return sorted(row.url for row in rows(app))


def test_urlset_is_queued(make_app, tmp_path):
    path = tmp_path / "sitemap.xml"
    path.write_bytes(urlset("https://example.com/a", "https://example.com/b#top", "https://Example.com/c"))
    app = make_app()
    with app.app_context():
        result = submit_sitemap(get_state(), path)
    assert (result.sitemaps, result.found, result.queued, result.rejected_count) == (1, 3, 3, 0)
    assert queued_urls(app) == ["https://example.com/a", "https://example.com/b", "https://example.com/c"]
    assert {(row.action, row.status) for row in rows(app)} == {("update", "pending")}


def test_invalid_urls_are_rejected_while_valid_ones_are_queued(make_app, tmp_path):
    path = tmp_path / "sitemap.xml"
    path.write_bytes(urlset(
        "https://example.com/good",
        "ftp://example.com/file",
        "http://localhost/admin",
        "http://10.0.0.1/internal",
        "https://user:pw@example.com/x",
        "https://other.org/foreign",
        "",
        "https://example.com/also-good",
    ))
    app = make_app(INDEXNOW_ALLOWED_HOSTS=["example.com"])
    with app.app_context():
        result = submit_sitemap(get_state(), path)
    assert queued_urls(app) == ["https://example.com/also-good", "https://example.com/good"]
    assert (result.queued, result.rejected_count) == (2, 6)
    reasons = dict(result.rejected)
    assert "only http and https" in reasons["ftp://example.com/file"]
    assert "reserved for local use" in reasons["http://localhost/admin"]
    assert "not a public address" in reasons["http://10.0.0.1/internal"]
    assert "user name or password" in reasons["https://user:pw@example.com/x"]
    assert "not in INDEXNOW_ALLOWED_HOSTS" in reasons["https://other.org/foreign"]
    assert reasons[""] == "URL is empty"


def test_since_queues_only_recent_and_undated(make_app, tmp_path):
    path = tmp_path / "sitemap.xml"
    path.write_bytes(urlset(
        ("https://example.com/old", "2023-12-31T23:59:59Z"),
        ("https://example.com/new", "2024-01-01T00:00:00Z"),
        ("https://example.com/bad-date", "31/12/2023"),
        "https://example.com/undated",
    ))
    app = make_app()
    with app.app_context():
        result = submit_sitemap(get_state(), path, since="2024-01-01")
    assert queued_urls(app) == ["https://example.com/bad-date", "https://example.com/new", "https://example.com/undated"]
    assert (result.found, result.older, result.undated, result.bad_lastmod, result.queued) == (4, 1, 2, 1, 3)


def test_a_refused_child_queues_nothing(make_app, tmp_path):
    (tmp_path / "one.xml").write_bytes(urlset(*(f"https://example.com/{n}" for n in range(30))))
    (tmp_path / "two.xml").write_bytes(BILLION_LAUGHS)
    (tmp_path / "index.xml").write_bytes(index("https://example.com/one.xml", "https://example.com/two.xml"))
    app = make_app()
    with app.app_context():
        with pytest.raises(SitemapError, match="two.xml declares the entity"):
            submit_sitemap(get_state(), tmp_path / "index.xml", chunk_size=10)
    assert rows(app) == []


def test_chunks_and_progress(make_app, tmp_path):
    path = tmp_path / "sitemap.xml"
    path.write_bytes(urlset(*(f"https://example.com/page/{n}" for n in range(2_500)), "https://example.com/page/7"))
    calls = []
    app = make_app()
    with app.app_context():
        result = submit_sitemap(get_state(), path, progress=lambda done, total: calls.append((done, total)),
                                chunk_size=1_000)
    assert calls == [(0, 2_501), (1_000, 2_501), (2_000, 2_501), (2_501, 2_501)]
    assert len(rows(app)) == 2_500
    assert result.found == 2_501
    assert result.queued == 2_501  # page/7 comes again in a later chunk: upserted, not duplicated


def test_rejected_list_is_capped_but_counted(make_app, tmp_path):
    path = tmp_path / "sitemap.xml"
    path.write_bytes(urlset(*(f"http://192.168.1.{n}/" for n in range(60)), "https://example.com/ok"))
    app = make_app()
    with app.app_context():
        result = submit_sitemap(get_state(), path, chunk_size=25)
    assert result.rejected_count == 60
    assert len(result.rejected) == REJECTED_KEPT
    assert result.rejected[0][0] == "http://192.168.1.0/"
    assert queued_urls(app) == ["https://example.com/ok"]


def test_remote_sitemap_is_queued(make_app, files):
    files.files["/index.xml"] = File(index("/a.xml", "/b.xml"))
    files.files["/a.xml"] = File(urlset("https://example.com/a"))
    files.files["/b.xml"] = File(urlset("https://example.com/b"))
    app = make_app()
    with app.app_context():
        result = submit_sitemap(get_state(), files.url("/index.xml"), allow_private=True)
    assert (result.sitemaps, result.queued) == (3, 2)
    assert queued_urls(app) == ["https://example.com/a", "https://example.com/b"]
    assert sorted(files.requested) == ["/a.xml", "/b.xml", "/index.xml"]  # fetched once for both passes


def test_disabled_queues_nothing(make_app, tmp_path):
    path = tmp_path / "sitemap.xml"
    path.write_bytes(urlset("https://example.com/a"))
    app = make_app(INDEXNOW_ENABLED=False)
    with app.app_context():
        with pytest.raises(IndexNowError, match="INDEXNOW_ENABLED is False"):
            submit_sitemap(get_state(), path)
    assert rows(app) == []
