"""What every local test server shares: a socketserver running in a daemon thread on 127.0.0.1."""

from __future__ import annotations

import socket
import socketserver
import struct
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

_S = TypeVar("_S", bound="ServerThread")


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

    def __init__(self, httpd: socketserver.BaseServer) -> None:
        self.httpd = httpd
        self.thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])  # type: ignore[index]

    def start(self: _S) -> _S:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)

    def __enter__(self: _S) -> _S:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
