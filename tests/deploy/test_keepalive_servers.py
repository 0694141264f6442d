"""Issue 19.2: no request, on any connection, waits for a tick, under every server we know.

Each test serves the site with a real server on 127.0.0.1 and talks to it as a
browser would, on one kept-alive connection (``http.client``): a page view (the
control), a save, and, once the tick the save woke is stuck on an endpoint that
never answers, another page view. When the tick ran in the close callback, that
second view waited for it: INDEXNOW_TICK_BUDGET (5 s) under the dev server,
gthread, gevent and waitress (which read a connection's next request only after
the previous response is closed), and the whole worker under sync. The bound
asserted (1 s) is generous for a loaded machine and far below the old 5 s.

The other test of each server proves the tick still delivers there.
"""

from __future__ import annotations

import http.client
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import pytest
from flask import Flask, request

from ..conftest import rows
from ..endpoint_server import EndpointServer
from ..live_server import LiveServer
from ..scale.servers import shared_config, wait_until
from ..silent_server import SilentServer
from .servers import COMMANDS, ServerProcess

SERVERS = ["werkzeug-dev", *COMMANDS]
#: Servers that close the connection after each response: gunicorn's sync workers, and Werkzeug's
#: dev server since 2.1 ("Connection: close" on every answer). The browser then opens a new one.
CLOSES_EACH = {"werkzeug-dev", "gunicorn-sync", "gunicorn-sync-preload"}
#: What the second page view may take at most (the tick it must not wait for hangs for BUDGET s).
BOUND = 1.0
BUDGET = 5


class Browser:
    """One HTTP/1.1 connection kept alive across requests, as a browser keeps to a site."""

    def __init__(self, base_url: str) -> None:
        parts = urlsplit(base_url)
        self.connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=30)
        self.connects = 0

    def request(self, method: str, path: str, form: dict[str, str] | None = None) -> tuple[int, str, float]:
        """(status, body, seconds until the whole answer was read)."""
        body = urlencode(form) if form is not None else None
        headers = {"Content-Type": "application/x-www-form-urlencoded"} if form is not None else {}
        if self.connection.sock is None:
            self.connects += 1
        started = time.monotonic()
        self.connection.request(method, path, body=body, headers=headers)
        response = self.connection.getresponse()
        text = response.read().decode()
        return response.status, text, time.monotonic() - started

    def close(self) -> None:
        self.connection.close()


def add_save_route(app: Flask) -> Flask:
    """The routes of tests/deploy/site.py, on an app served in this process."""
    app.add_url_rule("/", "home", lambda: "hello")

    def save() -> str:
        app.extensions["indexnow"].extension.enqueue(request.form["url"])
        return "saved"

    app.add_url_rule("/save", "save", save, methods=["POST"])
    return app


@contextmanager
def served(name: str, app: Flask, tmp_path: Path, **config: Any) -> Iterator[str]:
    """The base URL of ``app`` (its tables, endpoint and settings) served by server ``name``."""
    if name == "werkzeug-dev":
        with LiveServer(add_save_route(app)) as server:
            yield server.url
        return
    with ServerProcess(name, shared_config(app, **config), tmp_path / f"{name}.log") as server:
        yield server.url


@pytest.mark.slow
@pytest.mark.parametrize("server", SERVERS)
def test_the_next_request_on_the_connection_never_waits_for_the_tick(make_app, tmp_path, server):
    with SilentServer() as silent:
        app = make_app(INDEXNOW_ENDPOINT=silent.url, INDEXNOW_TIMEOUT=10, INDEXNOW_TICK_BUDGET=BUDGET)
        with served(server, app, tmp_path) as base:
            browser = Browser(base)
            try:
                control = browser.request("GET", "/")
                saved = browser.request("POST", "/save", {"url": "https://example.com/saved"})
                # The tick this save woke is now stuck on the endpoint, which never answers.
                wait_until(lambda: silent.accepted() >= 1, 30, "the tick to reach the hanging endpoint")
                second = browser.request("GET", "/")
            finally:
                browser.close()
    assert (control[:2], saved[:2], second[:2]) == ((200, "hello"), (200, "saved"), (200, "hello"))
    assert second[2] < control[2] + BOUND, (control[2], second[2])
    if server not in CLOSES_EACH:
        assert browser.connects == 1  # all three on one kept-alive connection
    [row] = rows(app)  # the tick was cut at its budget: one attempt, pending again (or still in flight)
    assert row.url == "https://example.com/saved"


@pytest.mark.slow
@pytest.mark.parametrize("server", SERVERS)
def test_the_tick_delivers_under_each_server(make_app, endpoint: EndpointServer, tmp_path, server):
    app = make_app()
    warm_up = "https://example.com/warm-up" if server == "gunicorn-sync-preload" else None
    urls = [f"https://example.com/{server}/{n}" for n in range(3)]
    if warm_up is None:
        context = served(server, app, tmp_path)
    else:  # the master's ticker runs when gunicorn forks: each worker must start its own
        context = _preloaded(server, app, tmp_path, warm_up)
    with context as base:
        browser = Browser(base)
        try:
            for url in urls:
                assert browser.request("POST", "/save", {"url": url})[:2] == (200, "saved")
                browser.request("GET", "/")  # one page view between saves, as an editor would
            if server != "werkzeug-dev":  # a greenlet under gevent, an OS thread elsewhere
                expected_kind = "Greenlet" if server == "gunicorn-gevent" else "Thread"
                kinds: list[str] = []

                def answers_kind() -> bool:
                    kinds.append(browser.request("GET", "/ticker")[1])
                    return kinds[-1] == expected_kind

                # With --preload two workers share the port: one that served no request yet has no
                # tick worker ("NoneType") until this very request's response wakes it.
                wait_until(answers_kind, 30, f"a {expected_kind} to run the tick")
                assert set(kinds) <= {expected_kind, "NoneType"}, kinds
        finally:
            browser.close()
        wait_until(lambda: set(urls) <= set(endpoint.urls_received()), 60, "every saved URL to be delivered")
        wait_until(lambda: rows(app) == [], 30, "the queue to be empty")
    expected = set(urls) | ({warm_up} if warm_up else set())
    assert sorted(endpoint.urls_received()) == sorted(expected)  # each once
    assert {row.url for row in rows(app, "History")} == expected


@contextmanager
def _preloaded(name: str, app: Flask, tmp_path: Path, warm_up: str) -> Iterator[str]:
    with ServerProcess(name, shared_config(app), tmp_path / f"{name}.log", warm_up=warm_up) as server:
        yield server.url
