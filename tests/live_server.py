"""Serve a Flask app on 127.0.0.1 from a thread, for tests that need real HTTP.

The server's request threads are daemons, and the extension's tick runs after
the response is sent (on its ticker thread, or in the close callback).
Stopping the server therefore waits until every request has finished, close
callbacks included, and the ticker is idle: otherwise a tick could still hold
a database connection while the test tears the app down.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from flask import Flask
from werkzeug.serving import make_server
from werkzeug.wsgi import ClosingIterator

from .server_thread import ServerThread

#: How long stopping waits for requests (and their ticks) still running.
DRAIN_TIMEOUT = 30.0


class _InFlight:
    """WSGI middleware tracking each request until its response is closed.

    A request whose thread has ended without closing its response (Werkzeug
    can skip ``close()`` when the client drops the connection) is no longer
    running either.
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


class LiveServer(ServerThread):
    """A real threaded WSGI server for ``app`` on 127.0.0.1."""

    def __init__(self, app: Flask, port: int = 0) -> None:
        self.in_flight = _InFlight(app)
        super().__init__(make_server("127.0.0.1", port, self.in_flight, threaded=True))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        super().stop()
        self.in_flight.drain(DRAIN_TIMEOUT)
        state = self.in_flight.app.extensions.get("indexnow")
        if state is not None and state.ticker is not None and not state.ticker.wait_idle(DRAIN_TIMEOUT):
            raise RuntimeError(f"the background tick still runs after {DRAIN_TIMEOUT}s")


@contextmanager
def serve(app: Flask, port: int = 0) -> Iterator[str]:
    """Yield the base URL of ``app`` served by a :class:`LiveServer`."""
    with LiveServer(app, port) as server:
        yield server.url
