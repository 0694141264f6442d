"""A real IndexNow endpoint on 127.0.0.1 for the tests: scripted answers, recorded requests.

Each POST takes the next scripted :class:`Reply` (or the default one) and is
recorded with its JSON body. Replies can be slow, reset the connection,
redirect or answer garbage, so delivery is tested against real sockets rather
than a mock of ``requests``.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from .server_thread import QuietHTTPServer, ServerThread, reset_connection


@dataclass
class Reply:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    delay: float = 0.0
    reset: bool = False


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)


class EndpointServer(ServerThread):
    def __init__(self) -> None:
        self.received: list[Received] = []
        self.replies: deque[Reply] = deque()
        self.default = Reply(200)
        self.decide: Callable[[Received], Reply] | None = None
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                request = Received(self.path, dict(self.headers), body)
                with server.lock:
                    server.received.append(request)
                    if server.decide is not None:
                        reply = server.decide(request)
                    else:
                        reply = server.replies.popleft() if server.replies else server.default
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.reset:
                    reset_connection(self)
                    return
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)

            def do_GET(self) -> None:  # noqa: N802
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

        super().__init__(QuietHTTPServer(("127.0.0.1", 0), Handler))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/indexnow"

    def script(self, *replies: Reply) -> None:
        with self.lock:
            self.replies.extend(replies)

    def urls_received(self) -> list[str]:
        return [url for request in self.received for url in request.json["urlList"]]
