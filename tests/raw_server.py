"""A server on 127.0.0.1 that answers every request with exact bytes, optionally trickled.

For what a well-behaved HTTP server cannot send: a status line, headers or a
body dripped one byte at a time (to prove whole-request deadlines), or header
values with escape sequences (to prove remote text is made safe to print).
Requests are recorded, so a test can prove nothing was fetched.
"""

from __future__ import annotations

import socketserver
import ssl
import subprocess
import threading
import time
from dataclasses import dataclass

from .server_thread import QuietHTTPServer, ServerThread


@dataclass
class RawReply:
    """``data`` sent as is; from byte ``trickle_from`` on, one byte every ``interval`` seconds."""

    data: bytes
    trickle_from: int | None = None
    interval: float = 0.2


def reply(status: str = "200 OK", headers: dict[str, str] | None = None, body: bytes = b"",
          length: int | None = None) -> bytes:
    """The bytes of an HTTP/1.1 answer; ``length`` may claim more body than is sent."""
    lines = [f"HTTP/1.1 {status}"]
    for name, value in (headers or {}).items():
        lines.append(f"{name}: {value}")
    lines.append(f"Content-Length: {len(body) if length is None else length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8") + body  # raw bytes, as a hostile server sends


def trickled(data: bytes, part: str, interval: float = 0.2) -> RawReply:
    """``data`` with its status line, its headers or its body trickled (``part``)."""
    head_end = data.index(b"\r\n\r\n") + 4
    start = {"status": 0, "headers": data.index(b"\r\n") + 2, "body": head_end}[part]
    return RawReply(data, start, interval)


class RawServer(ServerThread):
    """Serves :attr:`answer` to every request; over TLS when given a server ``tls`` context."""

    def __init__(self, answer: RawReply | None = None, tls: ssl.SSLContext | None = None) -> None:
        self.answer = answer or RawReply(reply())
        self.requested: list[bytes] = []
        self.connections = 0
        self.stopping = threading.Event()
        server = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                server.connections += 1
                request = b""
                while b"\r\n\r\n" not in request:
                    line = self.rfile.readline(65536)
                    if not line:
                        return
                    request += line
                length = 0
                for line in request.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                self.rfile.read(length)
                server.requested.append(request.split(b"\r\n", 1)[0])
                answer = server.answer
                cut = len(answer.data) if answer.trickle_from is None else answer.trickle_from
                self.wfile.write(answer.data[:cut])
                for index in range(cut, len(answer.data)):
                    if server.stopping.wait(answer.interval):
                        return
                    self.wfile.write(answer.data[index:index + 1])
                    self.wfile.flush()
                server.stopping.wait(0.05)

        super().__init__(QuietHTTPServer(("127.0.0.1", 0), Handler))  # type: ignore[arg-type]
        if tls is not None:
            self.httpd.socket = tls.wrap_socket(self.httpd.socket, server_side=True)  # type: ignore[attr-defined]

    def stop(self) -> None:
        self.stopping.set()
        super().stop()

    @property
    def netloc(self) -> str:
        return f"127.0.0.1:{self.port}"

    def url(self, path: str = "/") -> str:
        return f"http://{self.netloc}{path}"


def elapsed(started: float) -> float:
    return time.monotonic() - started


def self_signed(directory: str, name: str) -> tuple[str, ssl.SSLContext]:
    """A certificate for ``name`` made with the openssl tool: (its path, a server context using it)."""
    cert, key = f"{directory}/cert.pem", f"{directory}/key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", f"/CN={name}",
         "-addext", f"subjectAltName=DNS:{name}", "-keyout", key, "-out", cert],
        check=True, capture_output=True,
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    return cert, context
