"""``indexnow.verify(url)``: in and out of requests; what the page's request looks like; no tick for it."""

from __future__ import annotations

import pytest

from flask_indexnow import ConfigurationError, InvalidURLError, __version__
from flask_indexnow.testing import wait_for_tick
from flask_indexnow.verify import Verdict

from ..conftest import rows
from ..delivery.conftest import ext
from .site import BASE, HOST, seen


def test_verify_out_of_requests(site, endpoint):
    app = site(INDEXNOW_VERIFY=None)  # the API works with the setting off: it asks the app itself
    with app.app_context():
        ok = ext(app).verify(f"{BASE}/ok")
        hidden = ext(app).verify(f"{BASE}/noindex-meta")
        moved = ext(app).verify(f"{BASE}/moved")
    assert (ok.indexable, ok.reason, ok.detail) == (True, "indexable", "")
    assert (hidden.indexable, hidden.reason, hidden.detail) == (False, "noindex", "meta robots")
    assert (moved.indexable, moved.reason, moved.detail) == (False, "redirect", f"HTTP 301 to {BASE}/ok")
    assert rows(app, "Queue") == [] and rows(app, "History") == [] and endpoint.received == []


def test_verify_inside_a_request(site, endpoint):
    app = site()

    @app.route("/admin/check")
    def check() -> dict[str, object]:
        verdict = ext(app).verify(f"{BASE}/canonical")
        return verdict.as_dict()

    response = app.test_client().get("/admin/check", base_url=BASE)
    assert response.get_json() == {"url": f"{BASE}/canonical", "indexable": False, "reason": "canonical",
                                   "detail": f"{BASE}/ok"}


def test_the_page_is_asked_for_as_engines_would_without_cookies(site, endpoint):
    app = site()
    with app.app_context():
        ext(app).verify(f"{BASE}/ok")  # /ok sets a cookie
        ext(app).verify(f"{BASE}/search?q=red+shoes")
    requests = [s for s in seen(app) if s["path"] != "/robots.txt"]
    assert requests == [
        {"path": "/ok", "query": "", "host": HOST, "scheme": "https", "verify": True, "cookies": {},
         "user_agent": f"Flask-IndexNow-Verify/{__version__}"},
        {"path": "/search", "query": "q=red+shoes", "host": HOST, "scheme": "https", "verify": True,
         "cookies": {}, "user_agent": f"Flask-IndexNow-Verify/{__version__}"},
    ]


def test_a_verification_request_runs_no_tick(site, endpoint, clock):
    app = site(INDEXNOW_VERIFY=None)
    with app.app_context():
        ext(app).enqueue(f"{BASE}/ok")
        ext(app).verify(f"{BASE}/ok")
    assert wait_for_tick(app)  # a tick the page's request had woken would have run by now
    assert endpoint.received == []  # the page's request ended without a tick
    app.test_client().get("/ok", base_url=BASE).close()  # a visitor's request does tick
    assert wait_for_tick(app)
    assert endpoint.urls_received() == [f"{BASE}/ok"]


def test_a_url_that_could_never_be_queued_is_refused_before_asking(site):
    app = site()
    with app.app_context(), pytest.raises(InvalidURLError, match="ftp://www.example.com/x"):
        ext(app).verify("ftp://www.example.com/x")
    assert seen(app) == []


def test_the_verdict_reads_as_history_does():
    assert str(Verdict("https://a.example/b", "noindex", "meta robots")) == "noindex: meta robots"
    assert str(Verdict("https://a.example/b", "indexable")) == "indexable"
    assert Verdict("https://a.example/b", "gone", "HTTP 404").sent
    assert not Verdict("https://a.example/b", "gone", "HTTP 404").indexable


@pytest.mark.parametrize("value", ["yes", "true", 1, "dns", ["app"]])
def test_a_bad_setting_fails_at_init_app_naming_it(make_app, value):
    with pytest.raises(ConfigurationError, match=r"INDEXNOW_VERIFY must be None, 'app' or 'http', got"):
        make_app(INDEXNOW_VERIFY=value)


@pytest.mark.parametrize(("value", "mode"), [(" APP ", "app"), ("http", "http"), (None, None), (False, None)])
def test_the_setting_is_read_in_any_case(make_app, value, mode):
    app = make_app(INDEXNOW_VERIFY=value)
    assert app.extensions["indexnow"].settings.verify == mode


def test_a_bad_mode_is_refused_by_name(site):
    app = site()
    with app.app_context(), pytest.raises(ValueError, match="verification mode must be one of app, http, got 'ftp'"):
        ext(app).verify(f"{BASE}/ok", mode="ftp")
