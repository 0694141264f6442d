"""The status page and status.json count skipped URLs by verdict; the history filter knows ``skipped``."""

from __future__ import annotations

import pytest

from ..web.conftest import PREFIX, allow
from ..web.test_status_schema import both, validate
from .conftest import send
from .site import BASE

pytestmark = pytest.mark.every_backend  # the counting SQL differs by database


def test_skipped_urls_are_counted_by_verdict(site, endpoint, clock):
    app = allow(site())
    send(app, "/ok", "/noindex-meta", "/noindex-header", "/canonical", "/moved", "/private/a", "/broken")
    web, cli = both(app)
    validate(web)
    assert cli == web
    assert web["skipped_24h"] == {"noindex": 2, "canonical": 1, "redirect": 1, "robots": 1}
    assert (web["history_24h"]["skipped"], web["history_24h"]["success"], web["history_24h"]["retry"]) == (5, 1, 1)
    assert sum(hour["skipped"] for hour in web["deliveries_per_hour"]) == 5
    html = app.test_client().get(PREFIX + "/").get_data(as_text=True)
    assert "noindex 2, canonical 1, redirect 1, robots 1." in html
    text = app.test_cli_runner().invoke(args=["indexnow", "status"]).output
    assert "Not sent, not indexable (24h): noindex 2, canonical 1, redirect 1, robots 1" in text

    clock.advance(hours=25)  # the counts are of the last 24 hours
    web, _cli = both(app)
    assert web["skipped_24h"] == {"noindex": 0, "canonical": 0, "redirect": 0, "robots": 0}
    assert 'id="skipped-urls"' not in app.test_client().get(PREFIX + "/").get_data(as_text=True)


def test_the_history_filter_shows_skipped_rows(site, endpoint, clock):
    app = allow(site())
    send(app, "/ok", "/noindex-meta")
    html = app.test_client().get(PREFIX + "/?status=skipped").get_data(as_text=True)
    assert '<option value="skipped" selected>' in html
    assert f"{BASE}/noindex-meta" in html and "noindex: meta robots" in html
    history = html[html.index('id="history"'):]
    assert f"{BASE}/ok<" not in history and f'{BASE}/ok"' not in history
