"""The worker after an endpoint pause: it resumes when the pause ends, and its log line says who pauses.

These run on the real clock: the point is how long ``flask indexnow work``
really waits.
"""

from __future__ import annotations

import logging
import threading
import uuid

import pytest
from flask import Flask
from flask_caching import Cache

from flask_indexnow import IndexNow
from flask_indexnow.scheduling import Worker

from ..endpoint_server import EndpointServer, Received, Reply

PAUSE = 2
#: Generous for a loaded machine, far below the minute the worker used to wait whatever the pause.
LATE_AT_MOST = 15.0


def test_the_worker_resumes_sending_when_the_pause_ends(make_app, endpoint: EndpointServer) -> None:
    """A 429 with Retry-After: 2, then 200: the second POST comes about 2 s after the first, not a minute."""
    app: Flask = make_app(INDEXNOW_RETRY_DELAY=1, INDEXNOW_SCHEDULER_ENABLED=False)
    state = app.extensions["indexnow"]
    # A sleep longer than the pause: the loop must wake for the pause's end, not at its next idle round.
    worker = Worker(state, sleep=30)
    replies = iter([Reply(429, headers={"Retry-After": str(PAUSE)})])

    def decide(request: Received) -> Reply:
        reply = next(replies, None)
        if reply is None:  # the POST after the pause: the test has seen what it came for
            worker.stop()
            return Reply(200)
        return reply

    endpoint.decide = decide
    with app.app_context():
        app.extensions["indexnow"].extension.enqueue("https://example.com/page")

    def work() -> None:
        with app.app_context():
            worker.run()

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    thread.join(PAUSE + LATE_AT_MOST + 5)
    stopped = not thread.is_alive()
    if not stopped:
        worker.stop()  # wakes the loop's sleep at once
        thread.join(30)
    assert stopped, f"no POST within {PAUSE + LATE_AT_MOST + 5}s of the start: {endpoint.received!r}"
    first, second = endpoint.received
    waited = (second.received_at - first.received_at).total_seconds()
    assert PAUSE - 0.1 <= waited <= PAUSE + LATE_AT_MOST, waited
    assert second.urls == ["https://example.com/page"]


def _pause_line(make_app, endpoint: EndpointServer, caplog: pytest.LogCaptureFixture, **config: object) -> str:
    endpoint.script(Reply(429, headers={"Retry-After": "300"}))
    app: Flask = make_app(**config)
    with app.app_context(), caplog.at_level(logging.WARNING, "flask_indexnow"):
        ext: IndexNow = app.extensions["indexnow"].extension
        ext.enqueue("https://example.com/page")
        assert ext.process_queue().retried == 1
    [line] = [r.getMessage() for r in caplog.records if "answered 429" in r.getMessage()]
    return line


def test_with_a_per_process_cache_the_log_says_only_this_process_pauses(make_app, endpoint: EndpointServer,
                                                                        caplog: pytest.LogCaptureFixture) -> None:
    line = _pause_line(make_app, endpoint, caplog)  # the default: SimpleCache
    assert "pausing this process's sending to it for 300s; " in line
    assert "other processes do not share the pause without a shared cache such as RedisCache" in line
    assert "pausing all sending" not in line


def test_with_a_shared_cache_the_log_says_all_sending_pauses(make_app, endpoint: EndpointServer, redis_url: str,
                                                             caplog: pytest.LogCaptureFixture) -> None:
    line = _pause_line(make_app, endpoint, caplog, cache=Cache(), CACHE_TYPE="RedisCache",
                       CACHE_REDIS_URL=redis_url, CACHE_KEY_PREFIX=f"pause-log-{uuid.uuid4().hex[:8]}:")
    assert "pausing all sending to it for 300s" in line
    assert "this process" not in line
