"""INDEXNOW_VERIFY="http": a real GET of each page, under the outbound rules, against a real local server.

The pages' host gets a public address from the pretend network (``tests/pretend_network.py``),
routed to the local server at the socket; the address checks run unchanged.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from flask_indexnow import __version__

from ..conftest import rows
from ..delivery.conftest import ext
from ..file_server import File, FileServer, silent_port
from ..pretend_network import PUBLIC, Network, network_fixture  # noqa: F401 (the fixture)
from .conftest import skipped
from .site import page

pytestmark = pytest.mark.every_backend  # the same pass writes as "app" mode, through the same SQL
HTML = {"Content-Type": "text/html; charset=utf-8"}
HOST = "www.example.com"


@pytest.fixture
def pages(network: Network) -> Iterator[FileServer]:
    server = FileServer().start()
    network.answer(HOST, [PUBLIC])
    network.answer("127.0.0.1", ["127.0.0.1"])  # the endpoint's own address
    server.files["/robots.txt"] = File(b"User-agent: *\nDisallow: /drafts/\n", headers={"Content-Type": "text/plain"})
    server.files["/ok"] = File(page().encode(), headers={**HTML, "Set-Cookie": "session=visitor; Path=/"})
    server.files["/hidden"] = File(page('<meta name="robots" content="noindex">').encode(), headers=HTML)
    server.files["/moved"] = File(b"", 302, {"Location": "/ok"})
    server.files["/drafts/a"] = File(page().encode(), headers=HTML)
    server.files["/down"] = File(b"busy", 503, {"Content-Type": "text/plain"})
    yield server
    server.stop()


def url(server: FileServer, path: str) -> str:
    return f"http://{HOST}:{server.port}{path}"


def test_each_page_is_fetched_and_judged(make_app, endpoint, clock, pages):
    app = make_app(INDEXNOW_VERIFY="http", INDEXNOW_RETRY_DELAY=60)
    with app.app_context():
        for path in ("/ok", "/hidden", "/moved", "/drafts/a", "/down", "/missing"):
            ext(app).enqueue(url(pages, path))
        result = ext(app).process_queue()
    assert sorted(endpoint.urls_received()) == [url(pages, "/missing"), url(pages, "/ok")]
    assert (result.succeeded, result.skipped, result.retried) == (2, 3, 1)
    assert skipped(app) == {
        url(pages, "/hidden"): "noindex: meta robots",
        url(pages, "/moved"): f"redirect: HTTP 302 to {url(pages, '/ok')}",
        url(pages, "/drafts/a"): "robots: robots.txt disallows /drafts/a",
    }
    [row] = rows(app, "Queue")
    assert (row.url, row.attempts, row.last_error) == (url(pages, "/down"), 1, "error: the page answered HTTP 503")
    assert pages.requested.count("/robots.txt") == 1  # once for the host
    assert pages.requested.count("/ok") == 1  # the redirect was not followed


def test_the_get_carries_the_verify_user_agent_and_no_cookie(make_app, endpoint, pages, monkeypatch):
    seen: list[dict[str, str]] = []
    handler = pages.httpd.RequestHandlerClass
    original = handler.do_GET

    def record(self):  # the server's own view of each request
        seen.append({"path": self.path, "agent": self.headers.get("User-Agent"), "cookie": self.headers.get("Cookie")})
        original(self)

    monkeypatch.setattr(handler, "do_GET", record)
    app = make_app(INDEXNOW_VERIFY="http")
    with app.app_context():
        first = ext(app).verify(url(pages, "/ok"))
        second = ext(app).verify(url(pages, "/ok"))  # the first answer set a cookie
    assert first.indexable and second.indexable
    assert [s for s in seen if s["path"] == "/ok"] == [
        {"path": "/ok", "agent": f"Flask-IndexNow-Verify/{__version__}", "cookie": None}] * 2


@pytest.mark.parametrize("backend", ["sqlite"])  # no database write: one backend is enough
def test_no_answer_in_time_is_temporary(make_app, network):
    network.answer("slow.example.com", [PUBLIC])
    app = make_app(INDEXNOW_TIMEOUT=0.5)
    with silent_port() as port, app.app_context():
        verdict = ext(app).verify(f"http://slow.example.com:{port}/page", mode="http")
    assert (verdict.reason, verdict.detail) == ("error", "robots.txt could not be read: no answer within 0.5s")


@pytest.mark.parametrize("backend", ["sqlite"])
def test_a_private_address_is_refused_without_the_opt_in(make_app, network):
    network.answer("inside.example.com", ["10.0.0.5"])
    app = make_app(INDEXNOW_ALLOW_PRIVATE_ENDPOINT=False)
    with app.app_context():
        verdict = ext(app).verify("http://inside.example.com/page", mode="http")
    assert verdict.reason == "error"
    assert "10.0.0.5, which is not a public address: refused" in verdict.detail
    assert "10.0.0.5" not in network.connected


@pytest.mark.parametrize("backend", ["sqlite"])
def test_a_page_that_does_not_answer_in_time_is_retried(make_app, endpoint, clock, pages, monkeypatch):
    handler = pages.httpd.RequestHandlerClass
    original = handler.do_GET

    def slow(self):
        if self.path == "/ok":
            time.sleep(1.5)  # past INDEXNOW_TIMEOUT: the deadline cuts the request, not this sleep
        original(self)

    monkeypatch.setattr(handler, "do_GET", slow)
    app = make_app(INDEXNOW_VERIFY="http", INDEXNOW_TIMEOUT=0.5)
    with app.app_context():
        ext(app).enqueue(url(pages, "/ok"))
        result = ext(app).process_queue()
    assert (result.retried, endpoint.received) == (1, [])
    [row] = rows(app, "Queue")
    assert row.last_error == "error: no answer within 0.5s"  # the server would have answered 200 later
