"""``flask indexnow verify URL…`` (exit 0/1, sends and queues nothing) and the verdict in ``explain``."""

from __future__ import annotations

import json

from ..conftest import rows
from .conftest import send
from .site import BASE


def run(app, *args):
    return app.test_cli_runner().invoke(args=["indexnow", *args])


def test_every_page_indexable_exits_0(site, endpoint):
    app = site()
    result = run(app, "verify", f"{BASE}/ok", f"{BASE}/self")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [f"{BASE}/ok  indexable", f"{BASE}/self  indexable"]


def test_one_page_not_indexable_exits_1_with_a_line_per_url(site, endpoint):
    app = site()
    result = run(app, "verify", f"{BASE}/ok", f"{BASE}/noindex-header", f"{BASE}/private/x", f"{BASE}/gone")
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        f"{BASE}/ok  indexable",
        f"{BASE}/noindex-header  noindex: X-Robots-Tag",
        f"{BASE}/private/x  robots: robots.txt disallows /private/x",
        f"{BASE}/gone  gone: HTTP 410",
    ]
    assert rows(app, "Queue") == [] and rows(app, "History") == [] and rows(app, "URLState") == []
    assert endpoint.received == []


def test_json_output(site, endpoint):
    app = site()
    result = run(app, "verify", "--json", f"{BASE}/canonical")
    assert result.exit_code == 1
    assert json.loads(result.output) == [{"url": f"{BASE}/canonical", "indexable": False, "reason": "canonical",
                                          "detail": f"{BASE}/ok"}]


def test_a_bad_url_is_one_line_and_exit_1(site):
    app = site()
    result = run(app, "verify", "not a url")
    assert result.exit_code == 1
    assert result.output.startswith("Error: not a url:") and "Traceback" not in result.output


def test_a_bad_mode_is_refused_by_name(site):
    result = run(site(), "verify", "--mode", "dns", f"{BASE}/ok")
    assert result.exit_code == 2 and "dns" in result.output and "--mode" in result.output


def test_explain_shows_the_last_verdict(site, endpoint, clock):
    app = site()
    send(app, "/flips")
    app.config["SITE_FLIP_NOINDEX"] = True
    clock.advance(60)
    send(app, "/flips")
    result = run(app, "explain", f"{BASE}/flips")
    assert result.exit_code == 0, result.output
    assert "Last verdict" in result.output and "noindex: meta robots; withdrawn with a delete" in result.output
    data = json.loads(run(app, "explain", "--json", f"{BASE}/flips").output)
    assert data["ledger"]["verdict"] == "noindex: meta robots"
    assert [(h["action"], h["status"]) for h in data["history"]] == [("delete", "success"), ("update", "success")]


def test_explain_of_a_skipped_page(site, endpoint, clock):
    app = site()
    send(app, "/moved")
    result = run(app, "explain", f"{BASE}/moved")
    assert f"redirect: HTTP 301 to {BASE}/ok" in result.output
    assert "skipped" in result.output
