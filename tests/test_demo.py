"""The demo site: edit a page → queue → delivered to its own sandbox receiver."""

from __future__ import annotations

import socket
import time
from typing import Any

import pytest
import requests

from demo.app import create_app
from demo.sandbox import recorder

from .live_server import serve

pytestmark = pytest.mark.db  # the demo runs on a SQLite file


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_edit_a_page_and_see_it_arrive_in_the_sandbox(tmp_path: Any, monkeypatch: Any) -> None:
    port = free_port()
    monkeypatch.setenv("FLASK_RUN_PORT", str(port))
    app = create_app({"SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path / 'demo.sqlite'}"})
    before = len(recorder().requests)
    with serve(app, port) as base:
        web = requests.Session()
        refused = web.get(base + "/indexnow/", timeout=10, allow_redirects=False)
        assert refused.status_code == 302 and "/login" in refused.headers["Location"]  # the page needs the login
        assert "Wrong password" in web.post(base + "/login", data={"password": "nope"}, timeout=10).text
        web.post(base + "/login", data={"password": "demo"}, timeout=10)
        saved = web.post(base + "/admin/new", data={"title": "Hello", "slug": "hello", "body": "Hi", "published": "on"},
                         timeout=10)
        assert "The change is queued" in saved.text
        arrived = _wait_for(lambda: [u for r in recorder().requests[before:] for u in r.urls])
        assert sorted(arrived) == ["https://demo.example.com/", "https://demo.example.com/pages/hello"]
        assert "https://demo.example.com/pages/hello" in web.get(base + "/sandbox/", timeout=10).text
        assert web.get(base + "/indexnow/", timeout=10).status_code == 200
        assert web.get(base + "/d3m0k3y0f1ndexn0w.txt", timeout=10).text == "d3m0k3y0f1ndexn0w"


def test_the_sandbox_answers_like_an_engine() -> None:
    """The demo's endpoint is the shipped recorder: 202 for a real submission, 400 for a malformed one."""
    with requests.Session() as http:
        good = http.post(recorder().url, json={"host": "demo.example.com", "key": "d3m0k3y0f1ndexn0w",
                                               "urlList": ["https://demo.example.com/"]}, timeout=10)
        bad = http.post(recorder().url, data=b"nonsense", timeout=10)
    assert (good.status_code, bad.status_code) == (202, 400)
    assert recorder().httpd.server_address[0] == "127.0.0.1"


def test_bad_form_input_is_a_message_not_an_error(tmp_path: Any) -> None:
    app = create_app({"SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path / 'demo.sqlite'}"})
    client = app.test_client()
    client.post("/login", data={"password": "demo"})
    page = client.post("/admin/new", data={"title": "", "slug": "bad slug!"})
    assert page.status_code == 200 and "A title and a slug" in page.get_data(as_text=True)
    page = client.post("/admin/new", data={"title": "T", "slug": "t", "publish_at": "soon"})
    assert "Publish time must look like" in page.get_data(as_text=True)


@pytest.mark.parametrize(
    ("next_url", "landing"),
    [("/indexnow/", "/indexnow/"), ("//evil.example/", "/admin"), ("/\\evil.example/", "/admin"),
     ("https://evil.example/", "/admin"), ("", "/admin"), ("/\t/evil.example", "/admin"),
     ("/\n/evil.example", "/admin"), ("/\r\n/evil.example", "/admin"), (" //evil.example", "/admin"),
     ("/\x7f/evil.example", "/admin"), ("/admin?tab=1", "/admin?tab=1")],
)
def test_login_returns_only_to_a_page_of_this_site(tmp_path: Any, next_url: str, landing: str) -> None:
    app = create_app({"SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path / 'demo.sqlite'}"})
    answer = app.test_client().post("/login", query_string={"next": next_url}, data={"password": "demo"})
    assert answer.status_code == 302 and answer.headers["Location"] == landing


def test_login_refuses_a_tab_spelled_in_the_raw_query(tmp_path: Any) -> None:
    """``next=/%09/evil.example``: browsers drop the tab and go to //evil.example."""
    app = create_app({"SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path / 'demo.sqlite'}"})
    answer = app.test_client().post("/login?next=/%09/evil.example", data={"password": "demo"})
    assert answer.status_code == 302 and answer.headers["Location"] == "/admin"


def _wait_for(probe: Any, seconds: float = 10) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.05)
    return probe()
