"""Each row of the verdict table, against real views of a real app (INDEXNOW_VERIFY="app")."""

from __future__ import annotations

from datetime import timedelta

import pytest

from ..conftest import rows
from ..delivery.conftest import ext
from .conftest import send, skipped
from .site import BASE

pytestmark = pytest.mark.every_backend  # the skip/retry writes are set-based SQL of each database


@pytest.mark.parametrize(("path", "error"), [
    ("/noindex-meta", "noindex: meta robots"),
    ("/none-bingbot", "noindex: meta bingbot"),
    ("/noindex-yandex", "noindex: meta yandex"),
    ("/noindex-header", "noindex: X-Robots-Tag"),
    ("/canonical", f"canonical: {BASE}/ok"),
    ("/canonical-relative", f"canonical: {BASE}/ok"),
    ("/moved", f"redirect: HTTP 301 to {BASE}/ok"),
    ("/private/draft", "robots: robots.txt disallows /private/draft"),
])
def test_a_page_engines_would_not_index_is_skipped(site, endpoint, clock, path, error):
    app = site()
    result = send(app, path, "/ok")
    assert endpoint.urls_received() == [f"{BASE}/ok"]
    assert (result.succeeded, result.skipped) == (1, 1)
    assert skipped(app) == {BASE + path: error}
    assert rows(app, "Queue") == []  # the skipped row left the queue
    [history] = rows(app, "History", status="skipped")
    assert (history.action, history.http_status, history.engine) == ("update", None, endpoint.url)


@pytest.mark.parametrize("path", ["/ok", "/googlebot-only", "/header-other-bot", "/self", "/search?q=shoes"])
def test_an_indexable_page_is_sent(site, endpoint, clock, path):
    app = site()
    result = send(app, path)
    assert endpoint.urls_received() == [BASE + path]
    assert (result.succeeded, result.skipped) == (1, 0)
    assert skipped(app) == {}


@pytest.mark.parametrize("path", ["/gone", "/missing"])
def test_a_gone_page_is_sent(site, endpoint, clock, path):
    app = site()
    assert send(app, path).succeeded == 1
    assert endpoint.urls_received() == [BASE + path]
    [ledger] = rows(app, "URLState")
    assert ledger.verdict == ("gone: HTTP 410" if path == "/gone" else "gone: HTTP 404")


@pytest.mark.parametrize(("path", "error"), [
    ("/broken", "error: the page answered HTTP 503"),
    ("/raises", "error: the view raised RuntimeError: the template is missing"),
])
def test_a_page_that_fails_is_retried_like_a_failed_delivery(site, endpoint, clock, path, error):
    app = site(INDEXNOW_MAX_ATTEMPTS=2, INDEXNOW_RETRY_DELAY=60)
    result = send(app, path)
    assert endpoint.received == []
    assert (result.retried, result.failed, result.succeeded) == (1, 0, 0)
    [row] = rows(app, "Queue")
    assert (row.status, row.attempts, row.last_error, row.claim_token) == ("pending", 1, error, None)
    assert row.available_at == clock.now + timedelta(seconds=60)
    assert [(h.status, h.error) for h in rows(app, "History")] == [("retry", error)]
    clock.advance(61)
    result = send(app)
    assert (result.retried, result.failed) == (0, 1)  # the last attempt: failed, like a delivery
    [row] = rows(app, "Queue")
    assert (row.status, row.attempts) == ("failed", 2)


def test_delete_rows_are_never_verified(site, endpoint, clock):
    app = site()
    with app.app_context():
        ext(app).enqueue(f"{BASE}/noindex-meta", "delete")
        assert ext(app).process_queue().succeeded == 1
    assert endpoint.urls_received() == [f"{BASE}/noindex-meta"]
    assert [s["path"] for s in app.config["SITE_SEEN"]] == []  # not even robots.txt was read


def test_without_the_setting_nothing_is_asked_for(site, endpoint, clock):
    app = site(INDEXNOW_VERIFY=None)
    assert send(app, "/noindex-meta").succeeded == 1
    assert endpoint.urls_received() == [f"{BASE}/noindex-meta"]
    assert app.config["SITE_SEEN"] == []
