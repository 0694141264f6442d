"""``<lastmod>``: the time of the last real change the extension saw (or ``watch(lastmod=)``), recorded by the pass."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from typing import Any

import pytest

from flask_indexnow.testing.recorder import Reply

from ..conftest import rows
from .site import make_site, parse_urlset, w3c_time

pytestmark = pytest.mark.parametrize("backend", ["sqlite", "postgresql"])

URL = "https://a.example.org/p/story"


def _lastmod(site: Any, url: str = URL) -> datetime | None:
    return w3c_time(parse_urlset(site.get().get_data())[url])


@pytest.fixture
def site(make_app: Any, clock: Any) -> Any:
    site = make_site(make_app, INDEXNOW_QUEUE_ENABLED=False, INDEXNOW_DRY_RUN=True,
                     INDEXNOW_SITEMAP_CACHE_SECONDS=0)
    with site.app.app_context():
        yield site
        site.close()


def test_lastmod_moves_with_real_changes_only(site: Any, clock: Any) -> None:
    created = clock.now
    page = site.add("story")
    assert _lastmod(site) == created  # the queued event, before any pass

    site.process()
    ledger = rows(site.app, "URLState")
    assert [(r.url, r.changed_at) for r in ledger] == [(URL, created)]  # recorded by the pass
    assert _lastmod(site) == created

    clock.advance(3600)
    page.views += 1  # outside fields=: no change
    site.db.session.commit()
    site.process()
    assert _lastmod(site) == created

    clock.advance(3600)
    edited = clock.now
    page.title = "A new title"
    site.db.session.commit()
    assert _lastmod(site) == edited  # open row, not yet claimed
    site.process()
    assert _lastmod(site) == edited
    assert parse_urlset(site.get().get_data())[URL] == edited.isoformat()  # W3C datetime, UTC


def test_rows_older_than_the_extension_have_no_lastmod(site: Any) -> None:
    site.bulk(3)
    listed = parse_urlset(site.get().get_data())
    assert len(listed) == 3 and set(listed.values()) == {None}


def test_a_failed_post_does_not_move_lastmod(make_app: Any, clock: Any, endpoint: Any) -> None:
    site = make_site(make_app, INDEXNOW_QUEUE_ENABLED=False, INDEXNOW_SITEMAP_CACHE_SECONDS=0)
    with site.app.app_context():
        try:
            created = clock.now
            site.add("story")
            endpoint.script(Reply(500), Reply(500))
            clock.advance(600)
            assert site.process().retried == 1
            assert _lastmod(site) == created  # the failure stamped the row, not the page
            clock.advance(3600)
            assert site.process().retried == 1
            assert _lastmod(site) == created
            endpoint.script(Reply(200))
            clock.advance(3600)
            assert site.process().succeeded == 1
            assert _lastmod(site) == created
        finally:
            site.close()


def test_a_lastmod_function_wins(make_app: Any, clock: Any) -> None:
    site = make_site(make_app, watch={"lastmod": lambda p: date(2024, 5, 1) if p.slug == "dated" else
                                      datetime(2025, 1, 2, 3, 4, 5, 678, tzinfo=timezone(timedelta(hours=2)))},
                     INDEXNOW_QUEUE_ENABLED=False)
    with site.app.app_context():
        try:
            site.add("dated")
            site.add("timed")
            listed = parse_urlset(site.get().get_data())
            assert listed["https://a.example.org/p/dated"] == "2024-05-01"
            assert listed["https://a.example.org/p/timed"] == "2025-01-02T01:04:05+00:00"
        finally:
            site.close()


def test_nothing_is_recorded_without_a_sitemap(make_app: Any, clock: Any) -> None:
    site = make_site(make_app, INDEXNOW_SITEMAP_URL=None, INDEXNOW_DRY_RUN=True, INDEXNOW_QUEUE_ENABLED=False)
    with site.app.app_context():
        try:
            site.add("story")
            site.process()
            assert rows(site.app, "URLState") == []
            assert site.get().status_code == 404  # no route either
        finally:
            site.close()


def test_without_the_sitemap_an_install_needs_no_new_column(make_app: Any, clock: Any, endpoint: Any) -> None:
    """Upgraded without the migration: everything but the sitemap works as before (docs/migrations.md)."""
    site = make_site(make_app, INDEXNOW_SITEMAP_URL=None, INDEXNOW_QUEUE_ENABLED=False,
                     watch={"fingerprint": lambda p: p.title})
    ledger = site.state.models.url_state
    with site.app.app_context():
        try:
            with site.db.engine.begin() as connection:
                connection.exec_driver_sql(f"ALTER TABLE {ledger.name} DROP COLUMN changed_at")
            page = site.add("story")
            assert site.process().succeeded == 1
            page.title = "New"
            site.db.session.commit()
            assert site.process().succeeded == 1
            explained = site.app.test_cli_runner().invoke(args=["indexnow", "explain", URL])
            assert explained.exit_code == 0, explained.output
            assert "Ledger: fingerprint" in explained.output
        finally:
            with site.db.engine.begin() as connection:
                connection.exec_driver_sql(f"ALTER TABLE {ledger.name} ADD COLUMN changed_at TIMESTAMP")
            site.close()
