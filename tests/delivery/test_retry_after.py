"""Retry-After (seconds or HTTP date) and the endpoint-wide pause after a 429 (SPEC §4, §11)."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime

import pytest
from flask_caching import Cache

from flask_indexnow.retry import MAX_RETRY_AFTER, parse_retry_after

from ..endpoint_server import Reply
from .conftest import ext, history_rows, queue_rows

URL = "https://example.com/page"
DELAY = 60


def _http_date(when: datetime) -> str:
    return format_datetime(when.astimezone(timezone.utc), usegmt=True)


def _due_after(app, clock) -> float:
    [row] = queue_rows(app)
    return (row["available_at"] - clock.now).total_seconds()


@pytest.mark.parametrize("status", [429, 503])
@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("600", 600),            # longer than the delay: wins
        ("10", DELAY),           # shorter: the delay
        ("0", DELAY),
        (" 900 ", 900),
        ("date+900", 900),       # HTTP date, longer
        ("date+5", DELAY),       # HTTP date, shorter
        ("date-3600", DELAY),    # a date in the past
        ("-5", DELAY),           # malformed values: the configured delay
        ("soon", DELAY),
        ("1.5e3", DELAY),
        ("\u00b2", DELAY),       # a digit to str.isdigit(), not to HTTP
        ("", DELAY),
        ("99999999999", MAX_RETRY_AFTER),    # huge: capped at a day
        ("9" * 400, MAX_RETRY_AFTER),
        ("Fri, 31 Dec 9999 23:59:59 GMT", MAX_RETRY_AFTER),
        ("Sat, 32 Dec 2099 99:99:99 GMT", DELAY),
    ],
)
# Parsing the header is Python: the matrix runs on SQLite; storing the due time on
# every database is proven below (5xx) and by the pause tests, on all three.
def test_retry_after_sets_when_the_row_is_due(make_app, endpoint, clock, status, header, expected):
    if header.startswith("date"):
        header = _http_date(clock.now + timedelta(seconds=int(header[4:])))
    endpoint.default = Reply(status, headers={"Retry-After": header})
    app = make_app(INDEXNOW_RETRY_DELAY=DELAY)
    with app.app_context():
        ext(app).enqueue(URL)
        result = ext(app).process_queue()
    assert result.retried == 1
    assert _due_after(app, clock) == expected
    [row] = queue_rows(app)
    assert (row["status"], row["attempts"], row["last_http_status"]) == ("pending", 1, status)
    assert [h.status for h in history_rows(app)] == ["retry"]


@pytest.mark.parametrize("status", [500, 502])
def test_retry_after_counts_on_every_5xx(make_app, endpoint, clock, status):
    # Issue 9.7: any 5xx with Retry-After is honoured (and pauses the endpoint, see test_5xx_pause.py).
    endpoint.default = Reply(status, headers={"Retry-After": "900"})
    app = make_app(INDEXNOW_RETRY_DELAY=DELAY)
    with app.app_context():
        ext(app).enqueue(URL)
        ext(app).process_queue()
    assert _due_after(app, clock) == 900


def test_parse_retry_after_forms(clock):
    now = clock.now
    assert parse_retry_after("120", now) == 120
    assert parse_retry_after(_http_date(now + timedelta(seconds=75)), now) == 75
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 -0000", now) == 0  # naive date: UTC, past
    for bad in (None, "", "  ", "-1", "+5", "abc", "1,5", "\u0662", "Mon, 99 Foo 2020"):
        assert parse_retry_after(bad, now) is None, bad
    assert parse_retry_after(str(10**30), now) == MAX_RETRY_AFTER
    assert MAX_RETRY_AFTER == 86_400


def test_a_429_pauses_all_sending_to_the_endpoint(make_app, endpoint, clock):
    endpoint.script(Reply(429, headers={"Retry-After": "600"}))
    app = make_app(INDEXNOW_RETRY_DELAY=DELAY)
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
        assert ext(app).process_queue().retried == 1
        ext(app).enqueue("https://other.org/b")  # another host, due now
        before = queue_rows(app)
        paused = ext(app).process_queue()
        assert paused.claimed == 0 and paused.succeeded == 0
        assert "429" in paused.skipped_reason and "until" in paused.skipped_reason
        assert paused.paused_until == clock.now + timedelta(seconds=600)  # when a worker may try again
        assert paused.as_dict()["paused_until"] == paused.paused_until.isoformat()
        assert queue_rows(app) == before
        assert len(endpoint.received) == 1
        clock.advance(599)
        assert "429" in ext(app).process_queue().skipped_reason
        clock.advance(1)
        result = ext(app).process_queue()
    assert (result.skipped_reason, result.paused_until, result.succeeded) == (None, None, 2)
    assert sorted(endpoint.urls_received()) == ["https://example.com/a", "https://example.com/a",
                                                "https://other.org/b"]


def test_a_429_without_retry_after_pauses_for_the_retry_delay(make_app, endpoint, clock):
    endpoint.script(Reply(429))
    app = make_app(INDEXNOW_RETRY_DELAY=DELAY)
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
        ext(app).process_queue()
        ext(app).enqueue("https://other.org/b")
        clock.advance(DELAY - 1)
        assert ext(app).process_queue().skipped_reason is not None
        clock.advance(1)
        assert ext(app).process_queue().succeeded == 2


def test_a_503_without_retry_after_does_not_pause_other_rows(make_app, endpoint, clock):
    endpoint.script(Reply(503))
    app = make_app(INDEXNOW_RETRY_DELAY=DELAY)
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
        ext(app).process_queue()
        ext(app).enqueue("https://other.org/b")
        result = ext(app).process_queue()
    assert (result.skipped_reason, result.succeeded) == (None, 1)


@pytest.mark.every_backend  # the give-back write differs by database
def test_rows_claimed_after_a_429_are_released_without_spending_an_attempt(make_app, endpoint, clock):
    replies = iter([Reply(429, headers={"Retry-After": "900"})])
    endpoint.decide = lambda request: next(replies, Reply(200))
    app = make_app(INDEXNOW_RETRY_DELAY=DELAY)
    with app.app_context():
        ext(app).enqueue_many([f"https://example.com/{i}" for i in range(3)])
        ext(app).enqueue_many([f"https://other.org/{i}" for i in range(2)])
        ext(app).enqueue_many([f"https://third.net/{i}" for i in range(2)])
        result = ext(app).process_queue()
    assert len(endpoint.received) == 1
    refused_host = endpoint.received[0].json["host"]
    refused = len(endpoint.received[0].json["urlList"])
    assert (result.claimed, result.retried, result.released, result.succeeded, result.failed) == (
        7, refused, 7 - refused, 0, 0,
    )
    until = clock.now + timedelta(seconds=900)
    for row in queue_rows(app):
        assert row["status"] == "pending" and row["available_at"] == until
        assert row["claim_token"] is None and row["claimed_at"] is None
        if row["host"] == refused_host:
            assert (row["attempts"], row["last_http_status"]) == (1, 429)
        else:
            assert (row["attempts"], row["last_http_status"], row["last_error"]) == (0, None, None)
    assert {h.host for h in history_rows(app)} == {refused_host}
    with app.app_context():
        clock.advance(900)
        assert ext(app).process_queue().succeeded == 7


@pytest.mark.parametrize("status", [429, 503])  # a 5xx with Retry-After pauses like a 429
def test_the_pause_is_shared_across_apps_through_redis(make_app, endpoint, clock, redis_url, status):
    shared = {
        "CACHE_TYPE": "RedisCache",
        "CACHE_REDIS_URL": redis_url,
        "CACHE_KEY_PREFIX": f"pause-{uuid.uuid4().hex[:8]}:",
        "INDEXNOW_RETRY_DELAY": DELAY,
    }
    first = make_app(cache=Cache(), **shared)
    second = make_app(cache=Cache(), create_tables=False, **shared)  # same database and tables
    endpoint.script(Reply(status, headers={"Retry-After": "300"}))
    with first.app_context():
        ext(first).enqueue("https://example.com/a")
        assert ext(first).process_queue().retried == 1
    with second.app_context():
        ext(second).enqueue("https://other.org/b")
        before = queue_rows(second)
        result = ext(second).process_queue()
        assert result.claimed == 0
        assert f"HTTP {status}" in result.skipped_reason  # the other process learnt which status asked
        assert queue_rows(second) == before
        assert len(endpoint.received) == 1
        clock.advance(300)
        assert ext(second).process_queue().succeeded == 2
    assert sorted(endpoint.urls_received()) == ["https://example.com/a", "https://example.com/a",
                                                "https://other.org/b"]

