"""How verification fits the pass: the tick's budget, several engines, the counts of the result."""

from __future__ import annotations

import time

import pytest

from flask_indexnow.delivery.worker import process_queue
from flask_indexnow.state import get_state
from flask_indexnow.status import csrf
from flask_indexnow.testing import wait_for_tick

from ..conftest import rows
from ..delivery.conftest import ext
from ..endpoint_server import EndpointServer
from ..web.conftest import PREFIX, allow, page_token
from ..web.test_status_actions import notice
from .conftest import send, skipped
from .site import BASE


def test_rows_not_verified_within_the_budget_go_back_unspent(site, endpoint, clock):
    app = site()

    @app.route("/slow/<int:n>")
    def slow(n: int) -> str:
        time.sleep(0.5)
        return "<html><head></head><body>slow</body></html>"

    with app.app_context():
        ext(app).enqueue_many([f"{BASE}/slow/{n}" for n in range(6)])
        # Room for the claim and a first page on a loaded machine; six pages would take 3 s.
        result = process_queue(get_state(), deadline=time.monotonic() + 1.5)
    asked = [s["path"] for s in app.config["SITE_SEEN"] if s["path"].startswith("/slow/")]
    assert 1 <= len(asked) < 6  # verification stopped at the budget's end
    assert result.claimed == 6 and result.released >= 6 - len(asked)
    assert result.succeeded + result.released == 6
    waiting = rows(app, "Queue")
    assert len(waiting) == 6 - result.succeeded
    assert {(r.status, r.attempts, r.claim_token) for r in waiting} == {("pending", 0, None)}


def test_each_url_is_asked_for_once_for_every_engine(site, endpoint, clock):
    second = EndpointServer().start()
    try:
        app = site(INDEXNOW_ENDPOINTS=[endpoint.url, second.url])
        result = send(app, "/ok", "/noindex-meta")
        assert (result.succeeded, result.skipped) == (2, 2)
        assert endpoint.urls_received() == [f"{BASE}/ok"] and second.urls_received() == [f"{BASE}/ok"]
    finally:
        second.stop()
    assert [s["path"] for s in app.config["SITE_SEEN"]].count("/noindex-meta") == 1
    assert len(rows(app, "History", status="skipped")) == 2  # one row per engine's queue row
    assert skipped(app) == {f"{BASE}/noindex-meta": "noindex: meta robots"}


def test_the_pass_result_counts_the_skipped(site, endpoint, clock):
    app = site()
    result = send(app, "/ok", "/moved", "/canonical")
    assert (result.claimed, result.succeeded, result.skipped) == (3, 1, 2)
    assert "skipped 2 (not indexable)" in str(result)
    assert result.as_dict()["skipped"] == 2


def test_a_dry_run_verifies_too(site, endpoint, clock):
    app = site(INDEXNOW_DRY_RUN=True)
    result = send(app, "/ok", "/noindex-meta")
    assert (result.dry_run, result.skipped) == (1, 1)
    assert endpoint.received == []


@pytest.mark.every_backend  # a pass inside a request: the page's nested request and the pass share nothing
def test_the_status_pages_process_button_verifies_inside_its_request(site, endpoint, clock):
    app = allow(site(INDEXNOW_QUEUE_ENABLED=False))
    with app.app_context():
        ext(app).enqueue_many([f"{BASE}/ok", f"{BASE}/noindex-meta", f"{BASE}/private/x"])
    client = app.test_client()
    response = client.post(PREFIX + "/process", data={csrf.FIELD: page_token(client)},
                           headers={"Origin": "http://localhost", "Sec-Fetch-Site": "same-origin"})
    assert response.status_code == 303
    assert endpoint.urls_received() == [f"{BASE}/ok"]
    assert notice(client).endswith("skipped 2 (not indexable).")
    assert skipped(app) == {f"{BASE}/noindex-meta": "noindex: meta robots",
                            f"{BASE}/private/x": "robots: robots.txt disallows /private/x"}


def test_the_after_response_tick_verifies(site, endpoint, clock):
    app = site()
    with app.app_context():
        ext(app).enqueue_many([f"{BASE}/ok", f"{BASE}/canonical"])
    app.test_client().get("/ok", base_url=BASE).close()  # a visitor; the tick runs after the response
    assert wait_for_tick(app)
    assert endpoint.urls_received() == [f"{BASE}/ok"]
    assert skipped(app) == {f"{BASE}/canonical": f"canonical: {BASE}/ok"}
