"""SPEC §4's table: what each answer of the endpoint does to the row and the history."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from ..endpoint_server import EndpointServer, Reply
from .conftest import closed_port, ext, history_rows, queue_rows

pytestmark = pytest.mark.every_backend  # the settle writes differ by database

URL = "https://example.com/page"
DELAY = 60
MAX_ATTEMPTS = 3
#: The status-to-outcome table is the same on every database; the writes behind each
#: outcome run on all three in test_temporary_failures_… below and in test_ledger.py.
SQLITE_ONLY = pytest.mark.parametrize("backend", ["sqlite"])


@SQLITE_ONLY
@pytest.mark.parametrize("status", [200, 202, 204, 299])
def test_2xx_removes_the_row_and_records_success(make_app, endpoint, clock, status):
    endpoint.default = Reply(status)
    app = make_app()
    with app.app_context():
        ext(app).enqueue(URL)
        result = ext(app).process_queue()
    assert (result.claimed, result.succeeded, result.retried, result.failed) == (1, 1, 0, 0)
    assert queue_rows(app) == []
    [entry] = history_rows(app)
    assert (entry.status, entry.http_status, entry.url, entry.host, entry.action, entry.attempts, entry.error) == (
        "success", status, URL, "example.com", "update", 1, None,
    )
    assert endpoint.urls_received() == [URL]


def _temporary(kind: str, endpoint: EndpointServer) -> tuple[dict[str, Any], int | None, str]:
    """Config overrides, the expected last_http_status and a piece of the expected error."""
    if kind == "refused":
        return {"INDEXNOW_ENDPOINT": f"http://127.0.0.1:{closed_port()}/indexnow"}, None, "network error"
    if kind == "reset":
        endpoint.default = Reply(reset=True)
        return {}, None, "network error"
    if kind == "timeout":
        endpoint.default = Reply(200, delay=3.0)
        return {"INDEXNOW_TIMEOUT": 0.3}, None, "timeout after 0.3s"
    status = int(kind)
    endpoint.default = Reply(status, body=b"try later")
    return {}, status, f"HTTP {status}: try later"


@pytest.mark.parametrize("kind", ["429", "500", "502", "503", "504", "refused", "reset", "timeout"])
def test_temporary_failures_retry_after_the_delay_then_fail(make_app, endpoint, clock, kind):
    config, http_status, error = _temporary(kind, endpoint)
    app = make_app(INDEXNOW_RETRY_DELAY=DELAY, INDEXNOW_MAX_ATTEMPTS=MAX_ATTEMPTS, **config)
    with app.app_context():
        ext(app).enqueue(URL)
        for attempt in range(1, MAX_ATTEMPTS):
            result = ext(app).process_queue()
            assert (result.claimed, result.retried, result.failed, result.succeeded) == (1, 1, 0, 0)
            [row] = queue_rows(app)
            assert row["status"] == "pending"
            assert row["attempts"] == attempt
            assert row["available_at"] == clock.now + timedelta(seconds=DELAY)
            assert row["last_http_status"] == http_status
            assert error in row["last_error"]
            assert row["claimed_at"] is None and row["claim_token"] is None
            # Not due before the delay has passed.
            clock.advance(DELAY - 1)
            assert ext(app).process_queue().claimed == 0
            clock.advance(1)
        result = ext(app).process_queue()
        assert (result.claimed, result.retried, result.failed) == (1, 0, 1)
        [row] = queue_rows(app)
        assert (row["status"], row["attempts"], row["last_http_status"]) == ("failed", MAX_ATTEMPTS, http_status)
        assert error in row["last_error"]
        # A failed row is never claimed again by itself.
        clock.advance(DELAY * 10)
        assert ext(app).process_queue().claimed == 0
    history = history_rows(app)
    assert [h.status for h in history] == ["retry"] * (MAX_ATTEMPTS - 1) + ["failed"]
    assert [h.attempts for h in history] == list(range(1, MAX_ATTEMPTS + 1))
    assert all(h.http_status == http_status and error in h.error for h in history)
    if kind != "refused":
        assert len(endpoint.received) == MAX_ATTEMPTS


@SQLITE_ONLY
@pytest.mark.parametrize("status", [400, 401, 403, 404, 405, 410, 413, 422, 451])
def test_4xx_fails_at_once(make_app, endpoint, clock, status):
    endpoint.default = Reply(status, body=b'{"message": "nope"}')
    app = make_app(INDEXNOW_MAX_ATTEMPTS=5)
    with app.app_context():
        ext(app).enqueue(URL)
        result = ext(app).process_queue()
        assert (result.claimed, result.failed, result.retried, result.succeeded) == (1, 1, 0, 0)
        clock.advance(days=2)
        assert ext(app).process_queue().claimed == 0
    [row] = queue_rows(app)
    assert (row["status"], row["attempts"], row["last_http_status"]) == ("failed", 1, status)
    assert row["last_error"] == f'HTTP {status}: {{"message": "nope"}}'
    [entry] = history_rows(app)
    assert (entry.status, entry.http_status, entry.attempts) == ("failed", status, 1)
    assert len(endpoint.received) == 1


@SQLITE_ONLY
@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_redirect_is_not_followed_and_fails(make_app, endpoint, clock, status):
    target = EndpointServer().start()
    try:
        endpoint.default = Reply(status, headers={"Location": target.url})
        app = make_app()
        with app.app_context():
            ext(app).enqueue(URL)
            result = ext(app).process_queue()
        assert result.failed == 1
        assert target.received == []
        assert len(endpoint.received) == 1
    finally:
        target.stop()
    [row] = queue_rows(app)
    assert (row["status"], row["last_http_status"]) == ("failed", status)
    assert target.url in row["last_error"] and "not followed" in row["last_error"]
    assert [h.status for h in history_rows(app)] == ["failed"]


GARBAGE = b"\x00\xff\xfe<html>\x1b[31m \xf0\x9f\x98\x80 not json" + b"x" * 5000


@SQLITE_ONLY
@pytest.mark.parametrize(
    ("status", "queue_status", "history_status"),
    [(200, None, "success"), (202, None, "success"), (503, "pending", "retry"), (500, "pending", "retry"),
     (400, "failed", "failed"), (403, "failed", "failed")],
)
def test_garbage_bodies_are_judged_by_status_only(make_app, endpoint, clock, status, queue_status, history_status):
    endpoint.default = Reply(status, headers={"Content-Type": "application/json"}, body=GARBAGE)
    app = make_app()
    with app.app_context():
        ext(app).enqueue(URL)
        ext(app).process_queue()
    queue = queue_rows(app)
    assert [row["status"] for row in queue] == ([queue_status] if queue_status else [])
    [entry] = history_rows(app)
    assert (entry.status, entry.http_status) == (history_status, status)
    if queue:
        error = queue[0]["last_error"]
        assert error.startswith(f"HTTP {status}: ")
        assert "\x00" not in error and "\x1b" not in error and len(error) <= 500
        assert entry.error == error


@SQLITE_ONLY
def test_answer_without_reason_phrase_or_body(make_app, endpoint, clock):
    endpoint.default = Reply(599)
    app = make_app()
    with app.app_context():
        ext(app).enqueue(URL)
        ext(app).process_queue()
    [row] = queue_rows(app)
    assert (row["status"], row["last_http_status"]) == ("pending", 599)
    assert row["last_error"].startswith("HTTP 599")
