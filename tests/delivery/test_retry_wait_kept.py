"""A new event for a URL waiting for a retry keeps that wait and its attempts (issue 9 §7)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from ..endpoint_server import Reply
from .conftest import ext, history_rows, queue_rows

pytestmark = pytest.mark.every_backend  # the upsert's rules for waiting rows differ by database

URL = "https://example.com/page"
DELAY = 60


def _retry_once(app, endpoint, retry_after: str = "300") -> dict:
    """Queue URL, have the endpoint answer 503 with Retry-After: the row waits for its retry."""
    endpoint.default = Reply(503, headers={"Retry-After": retry_after})
    with app.app_context():
        ext(app).enqueue(URL)
        assert ext(app).process_queue().retried == 1
    [row] = queue_rows(app)
    assert (row["status"], row["attempts"]) == ("pending", 1)
    return row


def test_a_resave_during_a_503_wait_does_not_make_the_url_due(make_app, endpoint, clock):
    app = make_app(INDEXNOW_RETRY_DELAY=DELAY, INDEXNOW_MAX_ATTEMPTS=5)
    waiting = _retry_once(app, endpoint)
    assert waiting["available_at"] == clock.now + timedelta(seconds=300)
    clock.advance(10)
    with app.app_context():
        for _ in range(3):  # the page is saved again and again during the wait
            ext(app).enqueue(URL)
            ext(app).enqueue_many([URL])
            assert ext(app).process_queue().claimed == 0
    [row] = queue_rows(app)
    assert (row["status"], row["attempts"], row["available_at"]) == ("pending", 1, waiting["available_at"])
    assert row["last_http_status"] == 503  # still says why it waits
    assert len(endpoint.received) == 1
    clock.advance(290)
    endpoint.default = Reply(200)
    with app.app_context():
        assert ext(app).process_queue().succeeded == 1
    assert queue_rows(app) == []
    assert [h.status for h in history_rows(app)] == ["retry", "success"]


def test_a_later_requested_time_still_wins_over_the_retry_time(make_app, endpoint, clock):
    app = make_app(INDEXNOW_RETRY_DELAY=DELAY)
    _retry_once(app, endpoint)
    later = clock.now + timedelta(hours=2)
    with app.app_context():
        ext(app).enqueue(URL, available_at=later)
    [row] = queue_rows(app)
    assert (row["available_at"], row["attempts"]) == (later, 1)


def test_a_url_that_keeps_changing_still_fails_after_max_attempts(make_app, endpoint, clock):
    app = make_app(INDEXNOW_RETRY_DELAY=DELAY, INDEXNOW_MAX_ATTEMPTS=3)
    endpoint.default = Reply(503)
    with app.app_context():
        ext(app).enqueue(URL)
        for attempt in range(1, 4):
            assert ext(app).process_queue().claimed == 1
            [row] = queue_rows(app)
            assert row["attempts"] == attempt
            ext(app).enqueue(URL)  # changed again after every attempt
            if attempt < 3:
                assert queue_rows(app)[0]["attempts"] == attempt
            clock.advance(DELAY)
    [row] = queue_rows(app)
    # The third attempt failed the row; the event after it starts the URL over.
    assert (row["status"], row["attempts"]) == ("pending", 0)
    assert [h.status for h in history_rows(app)] == ["retry", "retry", "failed"]
    assert len(endpoint.received) == 3


def test_a_new_event_on_a_failed_row_starts_over(make_app, endpoint, clock):
    app = make_app(INDEXNOW_MAX_ATTEMPTS=1)
    endpoint.default = Reply(503, headers={"Retry-After": "300"})
    with app.app_context():
        ext(app).enqueue(URL)
        assert ext(app).process_queue().failed == 1
        [failed] = queue_rows(app)
        assert (failed["status"], failed["last_http_status"]) == ("failed", 503)
        ext(app).enqueue(URL, "delete")
    [row] = queue_rows(app)
    assert (row["status"], row["attempts"], row["action"], row["available_at"]) == ("pending", 0, "delete", clock.now)
    assert (row["last_error"], row["last_http_status"]) == (None, None)


def test_an_event_for_a_waiting_row_still_changes_what_is_sent(make_app, endpoint, clock):
    """The wait is kept, but the row is the new event's: action and fingerprint are replaced."""
    app = make_app(INDEXNOW_RETRY_DELAY=DELAY)
    waiting = _retry_once(app, endpoint)
    with app.app_context():
        ext(app).enqueue(URL, "delete")
    [row] = queue_rows(app)
    assert (row["action"], row["available_at"], row["attempts"]) == ("delete", waiting["available_at"], 1)
    clock.advance(300)
    endpoint.default = Reply(200)
    with app.app_context():
        assert ext(app).process_queue().succeeded == 1
    assert [(h.action, h.status) for h in history_rows(app)] == [("update", "retry"), ("delete", "success")]
