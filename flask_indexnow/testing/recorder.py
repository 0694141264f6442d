"""A local IndexNow endpoint that records what it receives and answers what it is told.

Site owners point their app at it in tests ("this save sends these URLs"),
the project's own tests use it for every delivery scenario, and the demo's
sandbox shows what it received. It binds 127.0.0.1 only, on a free port, and
serves each request in its own thread, so a slow scripted answer never holds
up another request.

Answers are taken, in this order, from :attr:`RecordingEndpoint.decide` (a
function of the request), the scripted queue (:meth:`~RecordingEndpoint.script`,
one :class:`Reply` per POST) or :attr:`RecordingEndpoint.default` (200).
A reply can also be slow, reset the connection, redirect or carry any body,
so a client is tested against real sockets rather than a mock.
"""

from __future__ import annotations

import json
import socket
import struct
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

__all__ = ["QuietHTTPServer", "Received", "RecordingEndpoint", "Reply", "ServerThread", "reset_connection"]

_S = TypeVar("_S", bound="ServerThread")
#: The only address the test servers listen on: nothing here is reachable from another machine.
LOOPBACK = "127.0.0.1"


class QuietHTTPServer(ThreadingHTTPServer):
    """A threaded HTTP server on which a dropped connection ends without a traceback.

    Tests reset connections on purpose and clients time out mid-answer; any
    other error in a handler is still reported.
    """

    daemon_threads = True
    request_queue_size = 128

    def handle_error(self, request: Any, client_address: Any) -> None:
        error = sys.exc_info()[1]
        if isinstance(error, OSError) or (isinstance(error, ValueError) and "closed file" in str(error)):
            return
        super().handle_error(request, client_address)


def reset_connection(handler: BaseHTTPRequestHandler) -> None:
    """Answer with a TCP reset instead of a response."""
    handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    handler.close_connection = True
    handler.connection.close()


class ServerThread:
    """Serves ``httpd`` from a daemon thread: ``start()``/``stop()``, or a ``with`` block."""

    def __init__(self, httpd: Any) -> None:
        self.httpd = httpd
        self.thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    def start(self: _S) -> _S:
        self.thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket; safe to call twice or before ``start``."""
        if self.thread.is_alive():
            self.httpd.shutdown()
            self.thread.join(5)
        self.httpd.server_close()

    def __enter__(self: _S) -> _S:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@dataclass
class Reply:
    """One scripted answer.

    ``retry_after`` adds a ``Retry-After`` header (seconds, or an HTTP date as
    text); ``delay`` waits before answering; ``reset`` drops the connection
    instead of answering. A redirect is ``Reply(301, headers={"Location": …})``.
    """

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | str = b""
    delay: float = 0.0
    reset: bool = False
    retry_after: int | float | str | None = None

    def all_headers(self) -> dict[str, str]:
        headers = dict(self.headers)
        if self.retry_after is not None:
            value = self.retry_after
            headers["Retry-After"] = str(int(value)) if isinstance(value, (int, float)) else value
        return headers

    def body_bytes(self) -> bytes:
        return self.body.encode("utf-8") if isinstance(self.body, str) else self.body


@dataclass
class Received:
    """One request as it arrived: path, headers and raw body, with the IndexNow fields read out."""

    path: str
    headers: dict[str, str]
    body: bytes
    method: str = "POST"
    received_at: datetime = field(default_factory=lambda: datetime.now(timezone.utc))

    @property
    def json(self) -> Any:
        """The body parsed as JSON (raises ``ValueError`` for a body that is not JSON)."""
        return json.loads(self.body)

    def _field(self, name: str) -> Any:
        try:
            data = self.json
        except ValueError:
            return None
        return data.get(name) if isinstance(data, dict) else None

    @property
    def host(self) -> str | None:
        value = self._field("host")
        return value if isinstance(value, str) else None

    @property
    def key(self) -> str | None:
        value = self._field("key")
        return value if isinstance(value, str) else None

    @property
    def key_location(self) -> str | None:
        value = self._field("keyLocation")
        return value if isinstance(value, str) else None

    @property
    def urls(self) -> list[str]:
        """The ``urlList`` of this request ([] when the body has none)."""
        value = self._field("urlList")
        return [str(url) for url in value] if isinstance(value, list) else []


def _as_reply(reply: Reply | int) -> Reply:
    return reply if isinstance(reply, Reply) else Reply(int(reply))


class RecordingEndpoint(ServerThread):
    """An IndexNow endpoint on ``http://127.0.0.1:<free port>/indexnow``.

    ``with RecordingEndpoint() as endpoint:`` starts it and stops it; inside,
    :attr:`url` is what ``INDEXNOW_ENDPOINT`` should be, :attr:`requests` what
    arrived and :attr:`urls` every URL submitted, in order.
    """

    def __init__(self, path: str = "/indexnow", *, keep: int | None = None) -> None:
        """``keep``: remember only the latest ``keep`` requests (a long-running sandbox); None keeps all."""
        #: Every POST so far, oldest first (live list: read it under :attr:`lock`, or use :attr:`requests`).
        self.received: list[Received] = []
        #: Replies still to give, one per POST.
        self.replies: deque[Reply] = deque()
        #: The reply when nothing is scripted.
        self.default = Reply(200)
        #: When set, decides every reply from the request (scripted replies are then ignored).
        self.decide: Callable[[Received], Reply] | None = None
        self.lock = threading.Lock()
        self.path = path
        self.keep = keep
        super().__init__(QuietHTTPServer((LOOPBACK, 0), self._handler_class()))

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                request = Received(self.path, dict(self.headers), self.rfile.read(length))
                server._answer(self, server._record(request))

            def do_GET(self) -> None:  # noqa: N802
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

        return Handler

    def _record(self, request: Received) -> Reply:
        with self.lock:
            self.received.append(request)
            if self.keep is not None and len(self.received) > self.keep:
                del self.received[: len(self.received) - self.keep]
            if self.decide is not None:
                return _as_reply(self.decide(request))
            return self.replies.popleft() if self.replies else self.default

    @staticmethod
    def _answer(handler: BaseHTTPRequestHandler, reply: Reply) -> None:
        if reply.delay:
            time.sleep(reply.delay)
        if reply.reset:
            reset_connection(handler)
            return
        body = reply.body_bytes()
        handler.send_response(reply.status)
        for name, value in reply.all_headers().items():
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    # -- what a test sets up ------------------------------------------------------

    @property
    def url(self) -> str:
        """The value for ``INDEXNOW_ENDPOINT``."""
        return f"http://{LOOPBACK}:{self.port}{self.path}"

    def script(self, *replies: Reply | int) -> None:
        """Queue answers for the next POSTs, in order (an int is a bare status)."""
        with self.lock:
            self.replies.extend(_as_reply(reply) for reply in replies)

    def answer(self, status: int, *, retry_after: int | float | str | None = None, body: bytes | str = b"") -> None:
        """Answer every POST from now on with ``status`` (the default reply)."""
        with self.lock:
            self.default = Reply(status, body=body, retry_after=retry_after)

    def reset(self) -> None:
        """Forget what arrived and what was scripted; answer 200 again."""
        with self.lock:
            self.received.clear()
            self.replies.clear()
            self.default = Reply(200)
            self.decide = None

    # -- what a test reads --------------------------------------------------------

    @property
    def requests(self) -> list[Received]:
        """Every POST so far, oldest first (a copy)."""
        with self.lock:
            return list(self.received)

    @property
    def bodies(self) -> list[Any]:
        """The JSON body of every POST (None for a body that is not JSON)."""
        found = []
        for request in self.requests:
            try:
                found.append(request.json)
            except ValueError:
                found.append(None)
        return found

    @property
    def urls(self) -> list[str]:
        """Every URL submitted so far, in the order they arrived."""
        return [url for request in self.requests for url in request.urls]

    def urls_received(self) -> list[str]:
        """The same as :attr:`urls`."""
        return self.urls

    def __repr__(self) -> str:
        return f"<RecordingEndpoint {self.url} requests={len(self.received)}>"
