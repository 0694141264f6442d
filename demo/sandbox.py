"""A local IndexNow receiver, so the demo never talks to a real search engine.

It accepts what a real endpoint accepts (JSON with host, key, keyLocation and
urlList), answers 202 like an engine that has not verified the key yet, and
keeps what arrived so /sandbox can show it.
"""

from __future__ import annotations

import threading
from collections import deque
from datetime import datetime, timezone
from typing import Any

from flask import Blueprint, jsonify, render_template, request

sandbox = Blueprint("sandbox", __name__, url_prefix="/sandbox")

_received: deque[dict[str, Any]] = deque(maxlen=200)
_lock = threading.Lock()


@sandbox.post("/indexnow")
def receive() -> Any:
    body = request.get_json(silent=True)
    if not isinstance(body, dict) or not isinstance(body.get("urlList"), list) or not body.get("key"):
        return jsonify(error="expected JSON with host, key, keyLocation and urlList"), 400
    with _lock:
        _received.appendleft({
            "at": datetime.now(timezone.utc).strftime("%H:%M:%S"),
            "host": str(body.get("host")),
            "key_location": str(body.get("keyLocation")),
            "urls": [str(u) for u in body["urlList"]],
        })
    return "", 202


@sandbox.get("/")
def show() -> str:
    with _lock:
        batches = list(_received)
    return render_template("sandbox.html", batches=batches)
