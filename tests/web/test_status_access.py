"""SPEC §8: the status page is closed (403) unless ``@indexnow.status_auth`` says True."""

from __future__ import annotations

import pytest

from flask_indexnow.status import csrf

from ..conftest import KEY, rows
from .conftest import PREFIX, allow, extension, page_token

#: Access rules and headers do not depend on the database: SQLite proves them
#: (the page's queries run on all three in test_status_page.py).
ROUTES = [("get", "/"), ("get", "/status.json"), ("get", "/_static/status.css"),
          ("post", "/process"), ("post", "/retry-failed")]


def test_closed_without_status_auth(make_app):
    app = make_app()
    with app.app_context():
        extension(app).enqueue("https://example.com/page")
    client = app.test_client()
    for method, path in ROUTES:
        response = getattr(client, method)(PREFIX + path)
        assert response.status_code == 403, path
        assert b"status_auth" in response.data  # the owner learns how to open it
        assert b"example.com/page" not in response.data
    assert [r.status for r in rows(app)] == ["pending"]


@pytest.mark.parametrize("answer", [False, None, 0, 1, "yes", object()])
def test_closed_unless_auth_returns_true(make_app, answer):
    """Only True opens it: a truthy value that is not True is a bug, and fails closed."""
    app = allow(make_app(), answer)
    client = app.test_client()
    for method, path in ROUTES:
        response = getattr(client, method)(PREFIX + path)
        assert response.status_code == 403, path
        assert b"status_auth" not in response.data  # no hint for someone refused


def test_auth_is_asked_on_every_request(make_app):
    app = make_app()
    calls: list[bool] = []
    allowed = {"value": True}

    @extension(app).status_auth
    def may_see() -> bool:
        calls.append(True)
        return allowed["value"]

    client = app.test_client()
    assert client.get(PREFIX + "/").status_code == 200
    allowed["value"] = False
    assert client.get(PREFIX + "/").status_code == 403
    assert client.get(PREFIX + "/status.json").status_code == 403
    assert len(calls) == 3


def test_auth_can_use_the_request(make_app):
    """A typical callback reads the app's login state (here: a header) at request time."""
    from flask import request

    app = make_app()
    extension(app).status_auth(lambda: request.headers.get("X-Admin") == "yes")
    client = app.test_client()
    assert client.get(PREFIX + "/").status_code == 403
    assert client.get(PREFIX + "/", headers={"X-Admin": "yes"}).status_code == 200


def test_open_with_auth(status_app):
    client = status_app.test_client()
    assert client.get(PREFIX + "/").status_code == 200
    assert client.get(PREFIX + "/status.json").status_code == 200
    with client.get(PREFIX + "/_static/status.css") as css:
        assert css.status_code == 200 and css.mimetype == "text/css"


def test_key_file_stays_public_when_status_is_closed(make_app):
    app = allow(make_app(), False)
    assert app.test_client().get(f"/{KEY}.txt").get_data() == KEY.encode()


@pytest.mark.parametrize("path", ["/process", "/retry-failed"])
def test_state_changes_refuse_get(status_app, path):
    client = status_app.test_client()
    with status_app.app_context():
        extension(status_app).enqueue("https://example.com/page")
    token = page_token(client)
    assert client.get(PREFIX + path).status_code == 405
    assert client.get(PREFIX + path, query_string={csrf.FIELD: token}).status_code == 405
    assert client.put(PREFIX + path, data={csrf.FIELD: token}).status_code == 405
    assert client.delete(PREFIX + path).status_code == 405
    assert [r.status for r in rows(status_app)] == ["pending"]


def test_read_routes_refuse_post(status_app):
    client = status_app.test_client()
    assert client.post(PREFIX + "/").status_code == 405
    assert client.post(PREFIX + "/status.json").status_code == 405


def test_security_headers(status_app):
    client = status_app.test_client()
    for path in ("/", "/status.json"):
        response = client.get(PREFIX + path)
        csp = response.headers["Content-Security-Policy"]
        assert "frame-ancestors 'none'" in csp and "script-src" not in csp and "default-src 'none'" in csp
        assert response.headers["X-Frame-Options"] == "DENY"
        assert response.headers["Cache-Control"] == "no-store"
        assert response.headers["X-Content-Type-Options"] == "nosniff"
    refused = allow(status_app, False).test_client().get(PREFIX + "/")
    assert refused.status_code == 403 and refused.headers["X-Frame-Options"] == "DENY"


def test_custom_prefix(make_app):
    app = allow(make_app(INDEXNOW_STATUS_URL_PREFIX="/ops/indexnow/"))
    client = app.test_client()
    assert client.get("/indexnow/").status_code == 404
    page = client.get("/ops/indexnow/")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert 'action="/ops/indexnow/process"' in html
    assert 'href="/ops/indexnow/_static/status.css"' in html
    token = page_token(client, "/ops/indexnow")
    assert client.post("/ops/indexnow/retry-failed", data={csrf.FIELD: token}).status_code == 303


def test_no_status_page_when_prefix_is_none(make_app):
    app = allow(make_app(INDEXNOW_STATUS_URL_PREFIX=None))
    assert "indexnow" not in app.blueprints
    assert app.test_client().get("/indexnow/").status_code == 404
