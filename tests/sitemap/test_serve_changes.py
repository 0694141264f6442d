"""``record_changes``: the ledger's ``changed_at``, an upsert of its own per database, keeps the later time."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from flask_indexnow.models import url_hash
from flask_indexnow.sitemap.changes import change_times, record_changes

from ..conftest import rows
from .site import make_site, parse_urlset, w3c_time

pytestmark = pytest.mark.every_backend(reason="record_changes is an INSERT … ON CONFLICT / ON DUPLICATE KEY "
                                              "of each database's own")

URL = "https://a.example.org/p/x"


def test_the_later_time_wins_in_any_order_and_other_columns_stay(app: Any, clock: Any) -> None:
    state = app.extensions["indexnow"]
    ledger = state.models.url_state
    early, late = clock.now - timedelta(hours=2), clock.now
    digest = url_hash(URL)
    with state.db.engine.begin() as connection:
        connection.execute(ledger.insert().values(host="a.example.org", url=URL, url_hash=digest,
                                                  fingerprint="f1", last_success_at=early))
        record_changes(connection, ledger, [("a.example.org", URL, digest, late)])
    with state.db.engine.begin() as connection:
        record_changes(connection, ledger, [("a.example.org", URL, digest, early),  # older: ignored
                                            ("a.example.org", URL + "/new", url_hash(URL + "/new"), early)])
    found = {r.url: r for r in rows(app, "URLState")}
    assert found[URL].changed_at == late
    assert (found[URL].fingerprint, found[URL].last_success_at) == ("f1", early)  # untouched
    assert found[URL + "/new"].changed_at == early and found[URL + "/new"].fingerprint is None
    with state.db.engine.connect() as connection:
        times = change_times(connection, state, [("a.example.org", digest), ("b.example.org", digest)])
    assert times == {("a.example.org", digest): late}  # per host


def test_a_pass_records_the_event_time_and_the_sitemap_shows_it(make_app: Any, clock: Any) -> None:
    site = make_site(make_app, INDEXNOW_QUEUE_ENABLED=False, INDEXNOW_DRY_RUN=True, INDEXNOW_SITEMAP_CACHE_SECONDS=0)
    with site.app.app_context():
        try:
            saved = clock.now
            site.add("x")
            clock.advance(120)
            site.process()
            assert [r.changed_at for r in rows(site.app, "URLState")] == [saved]
            assert w3c_time(parse_urlset(site.get().get_data())[URL]) == saved
        finally:
            site.close()
