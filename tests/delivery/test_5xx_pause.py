"""Issue 9.7: a 5xx that says when to come back (Retry-After) pauses the whole endpoint, like a 429.

During a 503 with ``Retry-After: 30`` every other batch and every new pass
waits until then instead of hammering the failing endpoint; the rows whose
turn never came are given back without spending an attempt.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from ..endpoint_server import Reply
from .conftest import ext, history_rows, queue_rows

DELAY = 10
PAUSE = 30
HOSTS = ["example.com", "other.org", "third.net"]


def _first_then_ok(first: Reply):
    replies = iter([first])
    return lambda request: next(replies, Reply(200))


def test_a_503_with_retry_after_pauses_other_hosts_and_new_passes(make_app, endpoint, clock):
    endpoint.decide = _first_then_ok(Reply(503, headers={"Retry-After": str(PAUSE)}))
    app = make_app(INDEXNOW_RETRY_DELAY=DELAY)
    with app.app_context():
        for host in HOSTS:
            ext(app).enqueue_many([f"https://{host}/{i}" for i in range(2)])
        result = ext(app).process_queue()

        # One POST only: the other hosts' batches were given back, attempts untouched.
        assert len(endpoint.received) == 1
        refused_host = endpoint.received[0].json["host"]
        assert (result.claimed, result.requests, result.retried, result.released, result.succeeded) == (6, 1, 2, 4, 0)
        until = clock.now + timedelta(seconds=PAUSE)
        for row in queue_rows(app):
            assert (row["status"], row["available_at"], row["claim_token"]) == ("pending", until, None)
            expected = (1, 503) if row["host"] == refused_host else (0, None)
            assert (row["attempts"], row["last_http_status"]) == expected
        assert {h.host for h in history_rows(app)} == {refused_host}

        # A new save made during the pause is not sent either: the next passes are skipped.
        ext(app).enqueue("https://fourth.io/new")
        before = queue_rows(app)
        clock.advance(PAUSE - 1)
        paused = ext(app).process_queue()
        assert paused.claimed == 0 and paused.requests == 0
        assert "HTTP 503" in paused.skipped_reason and "until" in paused.skipped_reason
        assert queue_rows(app) == before
        assert len(endpoint.received) == 1

        clock.advance(1)
        after = ext(app).process_queue()
    assert (after.skipped_reason, after.succeeded) == (None, 7)
    assert queue_rows(app) == []


@pytest.mark.parametrize("status", [500, 502, 504])
def test_every_5xx_with_retry_after_pauses_and_says_which_status(make_app, endpoint, clock, status):
    endpoint.decide = _first_then_ok(Reply(status, headers={"Retry-After": str(PAUSE)}))
    app = make_app(INDEXNOW_RETRY_DELAY=DELAY)
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
        assert ext(app).process_queue().retried == 1
        ext(app).enqueue("https://other.org/b")
        paused = ext(app).process_queue()
        assert f"HTTP {status}" in paused.skipped_reason
        clock.advance(PAUSE)
        assert ext(app).process_queue().succeeded == 2
    assert len(endpoint.received) == 3  # the refused POST, then one per host


def test_a_short_retry_after_pauses_for_the_retry_delay(make_app, endpoint, clock):
    """As after a 429: the pause lasts until the refused batch is due again."""
    endpoint.decide = _first_then_ok(Reply(503, headers={"Retry-After": "2"}))
    app = make_app(INDEXNOW_RETRY_DELAY=DELAY)
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
        ext(app).process_queue()
        ext(app).enqueue("https://other.org/b")
        clock.advance(DELAY - 1)
        assert "HTTP 503" in ext(app).process_queue().skipped_reason
        clock.advance(1)
        assert ext(app).process_queue().succeeded == 2


@pytest.mark.parametrize("reply", [Reply(503), Reply(503, headers={"Retry-After": "soon"}), Reply(500)],
                         ids=["no-header", "unreadable-header", "500"])
def test_a_5xx_without_a_readable_retry_after_retries_only_its_own_batch(make_app, endpoint, clock, reply):
    endpoint.decide = _first_then_ok(reply)
    app = make_app(INDEXNOW_RETRY_DELAY=DELAY)
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
        ext(app).process_queue()
        ext(app).enqueue("https://other.org/b")
        result = ext(app).process_queue()
    assert (result.skipped_reason, result.succeeded) == (None, 1)
