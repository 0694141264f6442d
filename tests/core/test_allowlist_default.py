"""SPEC §12 / issue 10.1: the host allow-list is closed by default; '*' opts out explicitly."""

from __future__ import annotations

import json

import pytest
from flask import Flask, current_app, request

from flask_indexnow import IndexNow, InvalidURLError, signals
from flask_indexnow.config import load_settings
from flask_indexnow.urls import check_url

from ..conftest import KEY, rows

SETTINGS_NAMED = ("INDEXNOW_ALLOWED_HOSTS", "INDEXNOW_BASE_URL", "SERVER_NAME")


def ext(app: Flask) -> IndexNow:
    return app.extensions["indexnow"].extension  # type: ignore[no-any-return]


def site(app: Flask) -> Flask:
    @app.post("/save/<slug>")
    def save(slug: str) -> str:
        # The usual mistake: an absolute URL built from the request's Host header.
        url = f"{request.host_url}pages/{slug}"
        signals.resource_saved.send(current_app._get_current_object(), url=url, published=True)
        return url

    return app


def test_nothing_configured_refuses_every_url_naming_the_settings(make_app) -> None:
    app = make_app(INDEXNOW_ALLOWED_HOSTS=None)  # the closed default: no source of allowed hosts
    with app.app_context():
        with pytest.raises(InvalidURLError) as info:
            ext(app).enqueue("https://www.example.com/a")
        result = ext(app).enqueue_many(["https://www.example.com/b", "https://example.org/c"])
    message = str(info.value)
    assert all(name in message for name in SETTINGS_NAMED) and "'*'" in message
    assert result.queued == 0 and [why for _, why in result.rejected] == [message, message]
    assert rows(app) == []


def test_a_forged_host_header_queues_nothing_by_default(make_app) -> None:
    app = site(make_app(INDEXNOW_ALLOWED_HOSTS=None))
    client = app.test_client()
    assert client.post("/save/a", headers={"Host": "evil.example.net"}).status_code == 200
    assert client.post("/save/b", headers={"Host": "www.example.com"}).status_code == 200
    assert rows(app) == []


def test_base_url_is_enough_to_close_the_list(make_app) -> None:
    app = site(make_app(INDEXNOW_BASE_URL="https://www.example.com/"))
    client = app.test_client()
    client.post("/save/a", headers={"Host": "www.example.com"})
    client.post("/save/b", headers={"Host": "evil.example.net"})
    client.post("/save/c", headers={"Host": "www.example.com", "X-Forwarded-Host": "evil.example.net"})
    assert [r.url for r in rows(app)] == ["http://www.example.com/pages/a", "http://www.example.com/pages/c"]


def test_the_allowed_hosts_are_the_union_of_base_url_server_name_and_keys() -> None:
    settings = load_settings({
        "INDEXNOW_BASE_URL": "https://WWW.Example.com:8443",
        "SERVER_NAME": "example.org:8000",
        "INDEXNOW_KEYS": {"shop.example.net": KEY, "b\u00fccher.example": KEY},
    })
    assert settings.allowed_hosts == frozenset({"www.example.com", "example.org", "shop.example.net",
                                                "xn--bcher-kva.example"})
    assert settings.base_url == "https://www.example.com:8443"
    explicit = load_settings({"INDEXNOW_ALLOWED_HOSTS": ["a.example.com"], "SERVER_NAME": "example.org",
                              "INDEXNOW_BASE_URL": "https://www.example.com"})
    assert explicit.allowed_hosts == frozenset({"a.example.com"})  # an explicit list is the whole list


@pytest.mark.parametrize("server_name", ["localhost:5000", "127.0.0.1:8000", "intranet"])
def test_a_local_server_name_does_not_stop_the_app_and_allows_nothing(server_name: str) -> None:
    settings = load_settings({"SERVER_NAME": server_name})
    assert settings.allowed_hosts == frozenset()
    with pytest.raises(InvalidURLError, match="INDEXNOW_ALLOWED_HOSTS"):
        check_url("https://www.example.com/", settings.allowed_hosts)


@pytest.mark.parametrize("star", ["*", " * ", ["*"], ("*", "example.com")], ids=["str", "padded", "list", "mixed"])
def test_star_opts_out_explicitly(star: object) -> None:
    settings = load_settings({"INDEXNOW_ALLOWED_HOSTS": star, "SERVER_NAME": "www.example.com"})
    assert settings.allowed_hosts is None
    assert check_url("https://anything.example.org/", settings.allowed_hosts).host == "anything.example.org"
    with pytest.raises(InvalidURLError, match="not a public address"):
        check_url("http://10.0.0.1/", settings.allowed_hosts)  # the address rules still hold


def test_star_queues_any_public_host(make_app) -> None:
    app = make_app(INDEXNOW_ALLOWED_HOSTS="*")
    with app.app_context():
        ext(app).enqueue("https://one.example.com/")
        ext(app).enqueue("https://two.example.org/")
    assert sorted(r.host for r in rows(app)) == ["one.example.com", "two.example.org"]


# -- what the owner sees ------------------------------------------------------------


def status(app: Flask) -> dict:
    ext(app).status_auth(lambda: True)
    response = app.test_client().get("/indexnow/status.json")
    assert response.status_code == 200
    return response.get_json()  # type: ignore[no-any-return]


def check(data: dict) -> dict:
    return next(c for c in data["checks"] if c["name"] == "allowed_hosts")


@pytest.mark.parametrize(
    ("config", "says"),
    [({"INDEXNOW_ALLOWED_HOSTS": "*"}, "The host allow-list is open (INDEXNOW_ALLOWED_HOSTS = *)"),
     ({"INDEXNOW_ALLOWED_HOSTS": None}, "No allowed hosts are configured")],
    ids=["open", "empty"],
)
def test_status_page_and_cli_say_needs_attention(make_app, config: dict, says: str) -> None:
    app = make_app(**config)
    data = status(app)
    assert data["verdict"]["title"] == "Needs attention"
    assert any(says in reason for reason in data["verdict"]["reasons"])
    found = check(data)
    assert not found["ok"] and says in found["message"] and "INDEXNOW_ALLOWED_HOSTS" in found["fix"]
    page = app.test_client().get("/indexnow/").get_data(as_text=True)
    assert "Needs attention" in page and says in page
    text = app.test_cli_runner().invoke(args=["indexnow", "status"]).output
    assert f"[!! ] Needs attention: {says}" in text
    assert json.loads(app.test_cli_runner().invoke(args=["indexnow", "status", "--json"]).output)["checks"] == \
        data["checks"]


def test_a_closed_list_is_working(make_app) -> None:
    app = make_app(INDEXNOW_ALLOWED_HOSTS=["www.example.com", "example.com"])
    data = status(app)
    found = check(data)
    assert found["ok"] and found["message"] == "URLs of these hosts may be queued: example.com, www.example.com."
    assert data["verdict"]["title"] == "Working"
    assert "Needs attention" not in app.test_cli_runner().invoke(args=["indexnow", "status"]).output
