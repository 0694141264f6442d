"""The demo's sandbox IndexNow endpoint: the shipped recorder, shown at /sandbox.

The demo's queue POSTs to a :class:`flask_indexnow.testing.RecordingEndpoint`
on 127.0.0.1 (one per process, started with the first app), so nothing ever
reaches a search engine. Like a real endpoint it refuses a body without host,
key and urlList (400), and answers 202 like an engine that has not verified
the key yet. The page lists what arrived, newest first.
"""

from __future__ import annotations

import atexit
import threading
from typing import Any

from flask import Blueprint, render_template

from flask_indexnow.testing import Received, RecordingEndpoint, Reply

sandbox = Blueprint("sandbox", __name__, url_prefix="/sandbox")

#: Requests the page (and the process) keeps.
KEEP = 200
_recorder: RecordingEndpoint | None = None
_lock = threading.Lock()


def _judge(request: Received) -> Reply:
    try:
        body = request.json
    except ValueError:
        body = None
    if not isinstance(body, dict) or not isinstance(body.get("urlList"), list) or not body.get("key"):
        return Reply(400, body="expected JSON with host, key, keyLocation and urlList")
    return Reply(202)


def recorder() -> RecordingEndpoint:
    """This process's sandbox endpoint, started on first use."""
    global _recorder
    with _lock:
        if _recorder is None:
            _recorder = RecordingEndpoint(keep=KEEP)
            _recorder.decide = _judge
            _recorder.start()
            atexit.register(_recorder.stop)
        return _recorder


@sandbox.get("/")
def show() -> str:
    batches: list[dict[str, Any]] = [
        {"at": r.received_at.strftime("%H:%M:%S"), "host": r.host, "key_location": r.key_location, "urls": r.urls}
        for r in reversed(recorder().requests)
    ]
    return render_template("sandbox.html", batches=batches)
