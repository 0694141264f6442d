"""SPEC §8, §11: ``GET /{key}.txt`` answers exactly the key, and nothing else is served."""

from __future__ import annotations

import pytest
from flask import Flask
from werkzeug.test import EnvironBuilder, run_wsgi_app

from ..conftest import KEY

OTHER = "a1b2c3d4e5f6a7b8"
SITE_A = "Aaaa-1111-bbbb-2222"
SITE_B = "bbbb2222cccc3333"


@pytest.fixture
def backend() -> str:
    """The key file reads no table: one backend is enough."""
    return "sqlite"


def assert_key_file(response, key: str) -> None:
    assert response.status_code == 200
    assert response.get_data() == key.encode("ascii")  # exactly the key: no newline, no BOM
    assert response.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert response.headers["X-Robots-Tag"] == "noindex"
    assert "Set-Cookie" not in response.headers


def test_serves_exactly_the_key(make_app):
    client = make_app().test_client()
    assert_key_file(client.get(f"/{KEY}.txt"), KEY)


def test_head_answers_headers_only(make_app):
    response = make_app().test_client().head(f"/{KEY}.txt")
    assert response.status_code == 200
    assert response.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert response.headers["X-Robots-Tag"] == "noindex"
    assert response.get_data() == b""


@pytest.mark.parametrize("path", [
    f"/{OTHER}.txt",            # another valid-looking key
    f"/{KEY.upper()}.txt",      # keys are case-sensitive
    f"/{KEY}.TXT",
    f"/{KEY}.txt/",
    f"/{KEY}",
    f"/{KEY}.txt.bak",
    f"/x{KEY}.txt",
    f"/{KEY[:-1]}.txt",
    f"/indexnow/{KEY}.txt",
    "/.txt",
    "/robots.txt",
])
def test_anything_else_is_404(make_app, path):
    response = make_app().test_client().get(path)
    assert response.status_code == 404
    assert KEY.encode() not in response.get_data()


def test_only_get_and_head(make_app):
    client = make_app().test_client()
    assert client.post(f"/{KEY}.txt").status_code == 405
    assert client.put(f"/{KEY}.txt").status_code == 405
    assert client.delete(f"/{KEY}.txt").status_code == 405


def test_public_without_status_auth(make_app):
    """The engines fetch it anonymously: the status page's auth must not cover it."""
    app = make_app()
    assert app.extensions["indexnow"].extension.status_auth_callback is None
    assert_key_file(app.test_client().get(f"/{KEY}.txt"), KEY)


@pytest.mark.parametrize("server_name", [None, "example.com", "example.com:8443"])
def test_with_and_without_server_name(make_app, server_name):
    app = make_app(SERVER_NAME=server_name)
    client = app.test_client()
    base = f"https://{server_name or 'example.com'}"
    assert_key_file(client.get(f"/{KEY}.txt", base_url=base), KEY)
    assert client.get(f"/{OTHER}.txt", base_url=base).status_code == 404
    with app.test_request_context():
        if server_name:  # url_for builds the absolute key file URL from SERVER_NAME
            from flask import url_for

            assert url_for(f"indexnow_key_file_{KEY}", _external=True).endswith(f"{server_name}/{KEY}.txt")


def test_no_route_without_a_valid_key(make_app):
    for bad in (None, "", "short", "has space in it", "x" * 129):
        app = make_app(INDEXNOW_KEY=bad)
        rules = [r.rule for r in app.url_map.iter_rules() if r.rule.endswith(".txt")]
        assert rules == [], (bad, rules)
        if bad:
            assert app.test_client().get(f"/{bad}.txt").status_code == 404


@pytest.mark.parametrize("location", [
    "https://cdn.example.net/{key}.txt",
    "https://{host}/keys/{key}.txt",
    "https://{host}/indexnow-key.txt",
])
def test_key_location_elsewhere_registers_no_root_route(make_app, location):
    app = make_app(INDEXNOW_KEY_LOCATION=location)
    assert not [r for r in app.url_map.iter_rules() if r.rule.endswith(".txt")]
    assert app.test_client().get(f"/{KEY}.txt").status_code == 404


@pytest.mark.parametrize("location", ["https://{host}/{key}.txt", "http://{host}/{key}.txt"])
def test_key_location_at_the_root_is_still_served(make_app, location):
    """A location that still means "this host's /{key}.txt" keeps the route."""
    app = make_app(INDEXNOW_KEY_LOCATION=location)
    assert_key_file(app.test_client().get(f"/{KEY}.txt"), KEY)


def test_keys_per_host(make_app):
    app = make_app(INDEXNOW_KEYS={"a.example.com": SITE_A, "B.Example.org": SITE_B})
    client = app.test_client()
    a, b, other = "https://a.example.com", "https://b.example.org", "https://www.example.net"
    assert_key_file(client.get(f"/{SITE_A}.txt", base_url=a), SITE_A)
    assert_key_file(client.get(f"/{SITE_B}.txt", base_url=b), SITE_B)
    # Each host answers only its own key.
    assert client.get(f"/{SITE_B}.txt", base_url=a).status_code == 404
    assert client.get(f"/{SITE_A}.txt", base_url=b).status_code == 404
    assert client.get(f"/{KEY}.txt", base_url=a).status_code == 404
    # A host without its own key falls back to INDEXNOW_KEY, and only to it.
    assert_key_file(client.get(f"/{KEY}.txt", base_url=other), KEY)
    assert client.get(f"/{SITE_A}.txt", base_url=other).status_code == 404


@pytest.mark.parametrize("host", ["a.example.com:8443", "A.EXAMPLE.COM", "a.example.com."])
def test_keys_per_host_ignores_port_case_and_trailing_dot(make_app, host):
    app = make_app(INDEXNOW_KEYS={"a.example.com": SITE_A})
    response = app.test_client().get(f"/{SITE_A}.txt", headers={"Host": host})
    assert_key_file(response, SITE_A)


def test_keys_without_default_key(make_app):
    app = make_app(INDEXNOW_KEY=None, INDEXNOW_KEYS={"a.example.com": SITE_A})
    client = app.test_client()
    assert_key_file(client.get(f"/{SITE_A}.txt", base_url="https://a.example.com"), SITE_A)
    assert client.get(f"/{SITE_A}.txt", base_url="https://other.example.com").status_code == 404


@pytest.mark.parametrize("host", ["[bad", "a b", "example.com:notaport", "[::1]:80", ""])
def test_odd_host_headers_never_fail(make_app, host):
    # Straight to the WSGI app: Werkzeug's test client before 3.0 (the floor is 2.2) fails on
    # such a Host itself, building the URL for its cookie jar, before the app is called.
    environ = EnvironBuilder(path=f"/{KEY}.txt", headers=[("Host", host)]).get_environ()
    body, status, _headers = run_wsgi_app(make_app().wsgi_app, environ, buffered=True)
    code = int(status.split()[0])
    assert code in (200, 400, 404)
    if code == 200:
        assert b"".join(body) == KEY.encode()


def test_exact_route_beats_an_app_catch_all(make_app):
    app = make_app()

    @app.get("/<path:page>")
    def catch_all(page: str) -> str:
        return f"page {page}"

    client = app.test_client()
    assert_key_file(client.get(f"/{KEY}.txt"), KEY)
    assert client.get(f"/{OTHER}.txt").get_data() == f"page {OTHER}.txt".encode()


def test_two_apps_in_one_process_serve_their_own_keys(make_app):
    first: Flask = make_app()
    second: Flask = make_app(INDEXNOW_KEY=OTHER)
    assert_key_file(first.test_client().get(f"/{KEY}.txt"), KEY)
    assert first.test_client().get(f"/{OTHER}.txt").status_code == 404
    assert_key_file(second.test_client().get(f"/{OTHER}.txt"), OTHER)
    assert second.test_client().get(f"/{KEY}.txt").status_code == 404
