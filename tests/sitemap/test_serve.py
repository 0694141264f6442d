"""The served sitemap (issue 23): the URLs the queue would submit as ``update``, per host, valid XML."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from flask_indexnow.sitemap import xmlwrite

from ..conftest import rows
from .site import make_site, parse_index, parse_urlset

pytestmark = pytest.mark.parametrize("backend", ["sqlite", "postgresql"])

A, B = "https://a.example.org", "https://b.example.org"


@pytest.fixture
def site(make_app: Any, clock: Any) -> Any:
    site = make_site(make_app, INDEXNOW_QUEUE_ENABLED=False, INDEXNOW_DRY_RUN=True)
    with site.app.app_context():
        yield site
        site.close()


def test_lists_exactly_what_the_queue_would_submit_now(site: Any, clock: Any) -> None:
    site.add("live")
    site.add("draft", status="draft")
    site.add("future", published_at=(clock.now + timedelta(days=1)).replace(tzinfo=None))
    site.add("past", published_at=(clock.now - timedelta(days=1)).replace(tzinfo=None))
    site.add("gone", deleted=True)
    site.add("other-site", host="b.example.org")
    site.add("not-allowed", host="c.example.org")  # refused by INDEXNOW_ALLOWED_HOSTS: never queued

    listed = set(parse_urlset(site.get().get_data()))

    assert listed == {f"{A}/p/live", f"{A}/p/past"}
    # The same rule as the notifications: what is queued as an update of host a and due now.
    due = {r.url for r in rows(site.app) if r.action == "update" and r.host == "a.example.org"
           and r.available_at <= clock.now}
    assert listed == due


def test_each_host_gets_its_own_and_unknown_hosts_get_404(site: Any) -> None:
    site.add("one")
    site.add("two", host="b.example.org")

    assert set(parse_urlset(site.get(host="b.example.org").get_data())) == {f"{B}/p/two"}
    assert set(parse_urlset(site.get(host="a.example.org").get_data())) == {f"{A}/p/one"}
    assert site.get(host="c.example.org").status_code == 404  # not a host this app submits
    assert site.get(host="localhost").status_code == 404
    assert site.get(host="[::1]").status_code == 404
    assert set(parse_urlset(site.get(host="A.Example.org:8443").get_data())) == {f"{A}/p/one"}  # as URLs store it


def test_a_host_without_pages_gets_an_empty_valid_urlset(site: Any) -> None:
    site.add("one")
    response = site.get(host="b.example.org")
    assert response.status_code == 200
    assert parse_urlset(response.get_data()) == {}


def test_changes_of_liveness_move_urls_in_and_out(make_app: Any, clock: Any) -> None:
    site = make_site(make_app, INDEXNOW_QUEUE_ENABLED=False, INDEXNOW_DRY_RUN=True,
                     INDEXNOW_SITEMAP_CACHE_SECONDS=0)
    with site.app.app_context():
        try:
            page = site.add("story", status="draft")
            assert parse_urlset(site.get().get_data()) == {}
            page.status = "published"
            site.db.session.commit()
            assert set(parse_urlset(site.get().get_data())) == {f"{A}/p/story"}
            page.deleted = True
            site.db.session.commit()
            assert parse_urlset(site.get().get_data()) == {}
        finally:
            site.close()


def test_escaping_cannot_break_the_document(site: Any) -> None:
    site.add("fish&chips<b>")
    site.add("q", title="x")

    data = site.get().get_data()

    assert b"/p/fish&amp;chips%3Cb%3E<" in data  # & escaped for XML, < made a valid URI
    assert set(parse_urlset(data)) == {f"{A}/p/fish&chips%3Cb%3E", f"{A}/p/q"}


def test_opting_out_leaves_the_model_out(make_app: Any) -> None:
    site = make_site(make_app, watch={"sitemap": False}, INDEXNOW_QUEUE_ENABLED=False)
    with site.app.app_context():
        try:
            site.add("one")
            assert len(rows(site.app)) == 1  # still notified
            assert parse_urlset(site.get().get_data()) == {}
        finally:
            site.close()


def test_over_the_limit_an_index_over_parts_each_served(make_app: Any) -> None:
    site = make_site(make_app, INDEXNOW_QUEUE_ENABLED=False, INDEXNOW_SITEMAP_MAX_URLS=3)
    with site.app.app_context():
        try:
            for i in range(8):
                site.add(f"page-{i}")
            response = site.get()
            parts = parse_index(response.get_data())

            assert parts == [f"{A}/sitemap-{n}.xml" for n in (1, 2, 3)]
            seen: list[str] = []
            for part in parts:
                listed = parse_urlset(site.get(part[len(A):]).get_data())
                assert 1 <= len(listed) <= 3
                seen += listed
            assert sorted(seen) == sorted(f"{A}/p/page-{i}" for i in range(8))
            assert len(set(seen)) == 8  # no URL in two parts
            assert site.get("/sitemap-4.xml").status_code == 404
            assert site.get("/sitemap-0.xml").status_code == 404
        finally:
            site.close()


def test_one_file_needs_no_index_and_its_part_one_is_the_same(site: Any) -> None:
    site.add("one")
    assert site.get().get_data() == site.get("/sitemap-1.xml").get_data()


def test_a_part_never_passes_the_byte_limit(make_app: Any, monkeypatch: Any) -> None:
    """The 50 MB rule, at a size a test can reach: the limit is read from xmlwrite.MAX_BYTES."""
    monkeypatch.setattr(xmlwrite, "MAX_BYTES", 1500)
    site = make_site(make_app, INDEXNOW_QUEUE_ENABLED=False)
    with site.app.app_context():
        try:
            for i in range(30):
                site.add(f"a-rather-long-slug-for-page-number-{i:03d}")
            parts = parse_index(site.get().get_data())
            assert len(parts) > 2
            listed: list[str] = []
            for part in parts:
                data = site.get(part[len(A):], **{"Accept-Encoding": "identity"}).get_data()
                assert len(data) <= 1500
                listed += parse_urlset(data)
            assert len(listed) == len(set(listed)) == 30
        finally:
            site.close()
