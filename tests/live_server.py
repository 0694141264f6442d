"""Serve a Flask app on 127.0.0.1 from a thread, for tests that need real HTTP.

The server's request threads are daemons, and the extension's tick runs in
them after the response is sent. Stopping the server therefore waits until
every request has finished, close callbacks included: otherwise a tick could
still hold a database connection while the test tears the app down. Werkzeug
runs those callbacks only once the client has finished with the connection (a
browser may keep it open), so stopping first shuts the open connections down.
"""

from __future__ import annotations

import socket
import threading
import time
import weakref
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from flask import Flask
from werkzeug.serving import BaseWSGIServer, make_server
from werkzeug.wsgi import ClosingIterator

#: How long stopping waits for requests (and their ticks) still running.
DRAIN_TIMEOUT = 30.0


class _InFlight:
    """WSGI middleware tracking each request until its response is closed.

    A request whose thread ended without closing (Werkzeug skips ``close()``
    when the client resets the connection) is no longer running either.
    """

    def __init__(self, app: Flask) -> None:
        self.app = app
        self.running: dict[object, threading.Thread] = {}
        self.lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        token = object()
        with self.lock:
            self.running[token] = threading.current_thread()
        try:
            body = self.app(environ, start_response)
        except BaseException:
            self._done(token)
            raise
        return ClosingIterator(body, [lambda: self._done(token)])

    def _done(self, token: object) -> None:
        with self.lock:
            self.running.pop(token, None)

    def drain(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            with self.lock:
                alive = [thread for thread in self.running.values() if thread.is_alive()]
            if not alive:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"{len(alive)} request(s) still running after {timeout}s")
            time.sleep(0.01)


class LiveServer:
    """A real threaded WSGI server for ``app`` on 127.0.0.1."""

    def __init__(self, app: Flask, port: int = 0) -> None:
        self.in_flight = _InFlight(app)
        self.server: BaseWSGIServer = make_server("127.0.0.1", port, self.in_flight, threaded=True)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.connections: weakref.WeakSet[socket.socket] = weakref.WeakSet()
        accept = self.server.process_request

        def process_request(request: Any, client_address: Any) -> None:
            self.connections.add(request)
            accept(request, client_address)

        self.server.process_request = process_request  # type: ignore[method-assign]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}"

    def __enter__(self) -> LiveServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)
        for connection in list(self.connections):
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # already closed by its request thread
        self.in_flight.drain(DRAIN_TIMEOUT)


@contextmanager
def serve(app: Flask, port: int = 0) -> Iterator[str]:
    """Yield the base URL of ``app`` served by a :class:`LiveServer`."""
    with LiveServer(app, port) as server:
        yield server.url
