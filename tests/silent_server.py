"""An endpoint that accepts every connection, reads what it is sent and never answers.

The worst endpoint for a web worker: each request waits for its whole
timeout. Connections are held until :meth:`SilentServer.stop` closes them.
"""

from __future__ import annotations

import socket
import threading


class SilentServer:
    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.05)
        self.port = int(self.sock.getsockname()[1])
        self.connections: list[socket.socket] = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/indexnow"

    def accepted(self) -> int:
        with self.lock:
            return len(self.connections)

    def _serve(self) -> None:
        while not self.stopping.is_set():
            try:
                connection, _ = self.sock.accept()
            except OSError:
                continue
            with self.lock:
                self.connections.append(connection)

    def start(self) -> SilentServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(5)
        with self.lock:
            for connection in self.connections:
                connection.close()
        self.sock.close()

    def __enter__(self) -> SilentServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
