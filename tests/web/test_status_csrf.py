"""SPEC §8: the buttons refuse cross-site requests, and a refused request changes nothing."""

from __future__ import annotations

import time

import pytest
from itsdangerous import TimestampSigner, URLSafeTimedSerializer

from flask_indexnow.status import csrf

from ..conftest import rows
from .conftest import PREFIX, allow, extension, page_token

URLS = ["https://example.com/a", "https://example.com/b"]
#: The checks run before any SQL, the same on every database: SQLite proves them
#: (the buttons' SQL runs on all three in test_status_actions.py).


@pytest.fixture
def armed(status_app, endpoint):
    """An app with two due rows and one failed row; returns (app, client, token)."""
    with status_app.app_context():
        ext = extension(status_app)
        for url in URLS:
            ext.enqueue(url)
        ext.enqueue("https://example.com/failed")
        table = status_app.extensions["indexnow"].models.Queue.__table__
        with status_app.extensions["indexnow"].engine().begin() as connection:
            connection.execute(table.update().where(table.c.url.endswith("/failed")).values(status="failed"))
    client = status_app.test_client()
    return status_app, client, page_token(client)


def snapshot(app):
    return sorted((r.url, r.status, r.attempts) for r in rows(app)), len(rows(app, "History"))


def assert_refused(app, endpoint, response, before, status: int) -> None:
    assert response.status_code == status, response.data[:300]
    assert snapshot(app) == before
    assert endpoint.received == []
    assert response.headers["X-Frame-Options"] == "DENY"


@pytest.mark.parametrize("path", ["/process", "/retry-failed"])
def test_missing_token(armed, endpoint, path):
    app, client, _ = armed
    before = snapshot(app)
    response = client.post(PREFIX + path, headers={"Origin": "http://localhost"})
    assert_refused(app, endpoint, response, before, 400)
    assert b"security token is missing" in response.data


FORGED = [
    "x",
    "",
    "A" * 5000,
    "null",
    URLSafeTimedSerializer("another-secret", salt=csrf.SALT).dumps("0" * 64),  # signed with another key
    URLSafeTimedSerializer("test-secret", salt="other-salt").dumps("0" * 64),  # another purpose
    URLSafeTimedSerializer("test-secret", salt=csrf.SALT).dumps("0" * 64),  # right key, wrong session secret
]


def test_forged_token(armed, endpoint):
    app, client, _ = armed
    before = snapshot(app)
    for path in ("/process", "/retry-failed"):
        for forged in FORGED:
            response = client.post(PREFIX + path, data={csrf.FIELD: forged})
            assert_refused(app, endpoint, response, before, 400)


def test_token_of_another_session(armed, endpoint):
    """A token is bound to the session it was made for: the attacker's own token fails."""
    app, _victim, _ = armed
    attacker = app.test_client()
    attacker_token = page_token(attacker)
    victim = app.test_client()
    page_token(victim)  # the victim has a session of its own
    before = snapshot(app)
    response = victim.post(PREFIX + "/process", data={csrf.FIELD: attacker_token})
    assert_refused(app, endpoint, response, before, 400)
    assert b"does not belong to this session" in response.data


def test_token_without_session_cookie(armed, endpoint):
    app, client, token = armed
    fresh = app.test_client()  # no cookie at all
    before = snapshot(app)
    assert_refused(app, endpoint, fresh.post(PREFIX + "/process", data={csrf.FIELD: token}), before, 400)


def test_expired_token(armed, endpoint):
    app, client, _ = armed

    class OldSigner(TimestampSigner):
        def get_timestamp(self) -> int:
            return int(time.time()) - csrf.MAX_AGE - 60

    with client.session_transaction() as session:
        raw = session[csrf.SESSION_KEY]
    stale = URLSafeTimedSerializer("test-secret", salt=csrf.SALT, signer=OldSigner).dumps(raw)
    before = snapshot(app)
    response = client.post(PREFIX + "/process", data={csrf.FIELD: stale})
    assert_refused(app, endpoint, response, before, 400)
    assert b"expired" in response.data


CROSS_ORIGIN = [
    {"Origin": "https://evil.example"},
    {"Origin": "http://localhost:8080"},  # another port is another origin
    {"Origin": "https://localhost"},  # another scheme too
    {"Origin": "http://localhost.evil.example"},
    {"Origin": "null"},  # sandboxed frames, cross-origin redirects
    {"Origin": "garbage"},
    {"Referer": "https://evil.example/attack.html"},
    {"Referer": "http://localhost:9999/indexnow/"},
    {"Sec-Fetch-Site": "cross-site"},
    {"Sec-Fetch-Site": "same-site"},  # a sibling subdomain is not the status page
    {"Sec-Fetch-Site": "cross-site", "Origin": "http://localhost"},
    {"Origin": "https://evil.example", "Referer": "http://localhost/indexnow/"},
]


def test_cross_origin_refused_even_with_a_valid_token(armed, endpoint):
    app, client, token = armed
    before = snapshot(app)
    for path in ("/process", "/retry-failed"):
        for headers in CROSS_ORIGIN:
            response = client.post(PREFIX + path, data={csrf.FIELD: token}, headers=headers)
            assert_refused(app, endpoint, response, before, 403)
            assert b"Cross-site request refused" in response.data, headers


@pytest.mark.parametrize("headers", [
    {},  # no Origin, Referer or fetch metadata (old clients, privacy settings): the token decides
    {"Origin": "http://localhost"},
    {"Origin": "HTTP://LOCALHOST:80"},
    {"Referer": "http://localhost/indexnow/?status=failed"},
    {"Sec-Fetch-Site": "same-origin", "Origin": "http://localhost"},
    {"Sec-Fetch-Site": "none"},
])
def test_same_origin_accepted(armed, endpoint, headers):
    app, client, token = armed
    response = client.post(PREFIX + "/retry-failed", data={csrf.FIELD: token}, headers=headers)
    assert response.status_code == 303
    assert [r.status for r in rows(app)] == ["pending"] * 3


def test_token_in_header_for_scripts(armed, endpoint):
    app, client, token = armed
    response = client.post(PREFIX + "/retry-failed", headers={csrf.HEADER: token})
    assert response.status_code == 303
    assert not rows(app, status="failed")


def test_origin_behind_a_proxy_uses_the_public_host(armed, endpoint):
    """With ProxyFix the app sees the public origin, so the browser's Origin matches."""
    from werkzeug.middleware.proxy_fix import ProxyFix

    app, client, token = armed
    app.wsgi_app = ProxyFix(app.wsgi_app, x_proto=1, x_host=1)  # type: ignore[method-assign]
    proxied = {"X-Forwarded-Proto": "https", "X-Forwarded-Host": "www.example.com"}
    response = client.post(PREFIX + "/retry-failed", data={csrf.FIELD: token},
                           headers={**proxied, "Origin": "https://www.example.com"})
    assert response.status_code == 303
    before = snapshot(app)
    response = client.post(PREFIX + "/process", data={csrf.FIELD: token},
                           headers={**proxied, "Origin": "http://localhost"})
    assert_refused(app, endpoint, response, before, 403)
    assert b"ProxyFix" in response.data


def test_without_secret_key_the_buttons_are_off(make_app, endpoint):
    app = allow(make_app(SECRET_KEY=None))
    with app.app_context():
        extension(app).enqueue(URLS[0])
    client = app.test_client()
    page = client.get(PREFIX + "/")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert "no SECRET_KEY" in html
    assert 'id="process-queue" disabled' in html
    response = client.post(PREFIX + "/process", data={csrf.FIELD: "anything"})
    assert response.status_code == 400
    assert b"SECRET_KEY" in response.data
    assert [r.status for r in rows(app)] == ["pending"]
    assert endpoint.received == []


def test_one_token_per_session_reused_across_pages(armed):
    app, client, token = armed
    second = page_token(client)
    assert second  # a fresh signature of the same session secret
    with client.session_transaction() as session:
        raw = session[csrf.SESSION_KEY]
    assert URLSafeTimedSerializer("test-secret", salt=csrf.SALT).loads(second) == raw
    assert URLSafeTimedSerializer("test-secret", salt=csrf.SALT).loads(token) == raw
