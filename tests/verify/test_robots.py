"""robots.txt: a path it disallows is skipped, a site it closes sends nothing, and the check says so."""

from __future__ import annotations

import json

from ..conftest import rows
from ..delivery.conftest import ext
from ..web.conftest import allow
from .conftest import send, skipped
from .site import BASE, HOST, seen

CLOSED = "User-agent: *\nDisallow: /\n"


def robots_check(data):
    [check] = [c for c in data["checks"] if c["name"] == "robots"]
    return check


def test_a_site_not_launched_sends_nothing_and_the_check_names_the_host(site, endpoint, clock):
    app = site(robots=CLOSED)
    result = send(app, "/ok", "/noindex-meta", "/gone")
    assert endpoint.received == []
    assert result.skipped == 3
    reason = f"robots: robots.txt of {HOST} disallows every page"
    assert skipped(app) == {f"{BASE}/ok": reason, f"{BASE}/noindex-meta": reason, f"{BASE}/gone": reason}
    assert [s["path"] for s in seen(app)] == ["/robots.txt"]  # no page was asked for, robots.txt once

    out = app.test_cli_runner().invoke(args=["indexnow", "status", "--json"])
    check = robots_check(json.loads(out.output))
    assert (check["ok"], check["status"]) == (False, "attention")
    assert HOST in check["message"] and "nothing of that host is sent" in check["message"]
    text = app.test_cli_runner().invoke(args=["indexnow", "status"]).output
    assert HOST in text and "robots.txt disallows every page" in text
    allow(app)
    page = app.test_client().get("/indexnow/status.json", base_url=BASE)
    assert robots_check(page.get_json())["ok"] is False
    assert page.get_json()["verdict"]["title"] == "Needs attention"
    html = app.test_client().get("/indexnow/", base_url=BASE).get_data(as_text=True)
    assert f"robots.txt disallows every page for every crawler on {HOST}" in html

    app.config["SITE_ROBOTS"] = "User-agent: *\nDisallow:\n"  # the launch
    clock.advance(301)  # robots.txt is read again once its few minutes are over
    with app.app_context():
        ext(app).enqueue(f"{BASE}/ok")
        assert ext(app).process_queue().succeeded == 1
    assert endpoint.urls_received() == [f"{BASE}/ok"]
    out = app.test_cli_runner().invoke(args=["indexnow", "status", "--json"])
    assert robots_check(json.loads(out.output))["ok"] is True


def test_robots_txt_is_read_once_per_host_for_a_few_minutes(site, endpoint, clock):
    app = site()
    send(app, "/ok", "/private/a", "/self")
    clock.advance(60)
    send(app, "/private/b", "/canonical")
    assert [s["path"] for s in seen(app)].count("/robots.txt") == 1
    assert set(skipped(app)) == {f"{BASE}/private/a", f"{BASE}/private/b", f"{BASE}/canonical"}
    clock.advance(300)
    send(app, "/ok")
    assert [s["path"] for s in seen(app)].count("/robots.txt") == 2


def test_no_robots_txt_allows_everything(site, endpoint, clock):
    app = site(robots=None)
    assert send(app, "/private/page").succeeded == 1


def test_a_robots_txt_that_fails_makes_the_urls_wait(site, endpoint, clock):
    app = site(INDEXNOW_RETRY_DELAY=60)

    app.view_functions["robots_txt"] = lambda: ("down for maintenance", 503)
    result = send(app, "/ok")
    assert (result.retried, endpoint.received) == (1, [])
    [row] = rows(app, "Queue")
    assert row.last_error == "error: robots.txt answered HTTP 503"


def test_the_check_is_absent_without_verification(make_app):
    app = make_app()
    out = app.test_cli_runner().invoke(args=["indexnow", "status", "--json"])
    assert [c for c in json.loads(out.output)["checks"] if c["name"] == "robots"] == []


def test_the_check_reads_the_allowed_hosts_robots_txt(site, endpoint, clock):
    app = site(robots=CLOSED, INDEXNOW_ALLOWED_HOSTS=[HOST])
    out = app.test_cli_runner().invoke(args=["indexnow", "status", "--json"])  # nothing was ever queued
    check = robots_check(json.loads(out.output))
    assert check["ok"] is False and HOST in check["message"]
