"""Serve a Flask app on 127.0.0.1 from a thread, for tests that need real HTTP."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from flask import Flask
from werkzeug.serving import make_server


@contextmanager
def serve(app: Flask, port: int = 0) -> Iterator[str]:
    """Yield the base URL of ``app`` served by a threaded werkzeug server."""
    server = make_server("127.0.0.1", port, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
