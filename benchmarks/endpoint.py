"""A local IndexNow endpoint for the benchmarks, in a process of its own.

``python -m benchmarks.endpoint --delay 0.02`` answers every POST with 200
after ``delay`` seconds and prints its port. ``GET /stats`` returns how many
requests and URLs it received, so a benchmark can check that a variant really
delivered everything. Running apart from the benchmark keeps its work off
the measured process.
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import requests

from .harness import ServerProcess


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256


def serve(delay: float) -> None:
    lock = threading.Lock()
    stats = {"requests": 0, "urls": 0}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            with lock:
                stats["requests"] += 1
                stats["urls"] += len(body.get("urlList", ()))
            if delay:
                time.sleep(delay)
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_GET(self) -> None:  # noqa: N802
            with lock:
                payload = json.dumps(stats).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    server = _Server(("127.0.0.1", 0), Handler)
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()


class Endpoint(ServerProcess):
    """The endpoint in its own process; ``url`` to POST to, ``stats()`` to read its counters."""

    def __init__(self, delay: float = 0.0) -> None:
        super().__init__("benchmarks.endpoint", "--delay", str(delay))

    @property
    def url(self) -> str:
        return f"{self.base}/indexnow"

    def stats(self) -> dict[str, int]:
        data: dict[str, int] = requests.get(f"{self.base}/stats", timeout=10).json()
        return data


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--delay", type=float, default=0.0)
    serve(parser.parse_args().delay)
