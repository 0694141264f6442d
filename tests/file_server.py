"""A real HTTP server on 127.0.0.1 that serves scripted files (sitemaps, key files).

Each path answers a :class:`File` (status, headers, body); unknown paths
answer 404. Requests are recorded, so a test can prove what was (not) fetched.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from .server_thread import QuietHTTPServer, ServerThread


@dataclass
class File:
    body: bytes = b""
    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "application/xml"})


class FileServer(ServerThread):
    def __init__(self) -> None:
        self.files: dict[str, File] = {}
        self.requested: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                server.requested.append(self.path)
                reply = server.files.get(self.path, File(b"not found", 404, {"Content-Type": "text/html"}))
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)

        super().__init__(QuietHTTPServer(("127.0.0.1", 0), Handler))

    @property
    def netloc(self) -> str:
        return f"127.0.0.1:{self.port}"

    def url(self, path: str) -> str:
        return f"http://{self.netloc}{path}"


@contextmanager
def silent_port() -> Iterator[int]:
    """A port that accepts connections (the kernel's backlog) but never answers: a timeout."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    try:
        yield sock.getsockname()[1]
    finally:
        sock.close()


def closed_port() -> int:
    """A port nothing listens on: connections are refused."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = int(sock.getsockname()[1])
    sock.close()
    return port
