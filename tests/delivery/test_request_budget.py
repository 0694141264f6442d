"""Issue 13 §2: INDEXNOW_REQUESTS_PER_MINUTE, a request budget per engine shared through the cache.

Batches over the budget are given back without spending an attempt, due when
the next one-minute window opens; the movable clock opens it.
"""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from flask_caching import Cache

from flask_indexnow import engines
from flask_indexnow.config import load_settings
from flask_indexnow.delivery import budget
from flask_indexnow.errors import ConfigurationError
from flask_indexnow.status.document import status_document

from ..endpoint_server import EndpointServer
from .conftest import ext, queue_rows, state_of

HOSTS = [f"site{i}.example" for i in range(5)]


@pytest.fixture
def minute(clock):
    """The clock at the start of a budget window."""
    start = clock.now.replace(second=0, microsecond=0) + timedelta(minutes=1)
    clock.set(start)
    return start


def enqueue_hosts(app) -> None:
    for host in HOSTS:
        ext(app).enqueue(f"https://{host}/page")


def test_two_per_minute_sends_two_batches_a_window(make_app, endpoint, clock, minute):
    app = make_app(INDEXNOW_REQUESTS_PER_MINUTE=2)
    with app.app_context():
        enqueue_hosts(app)
        first = ext(app).process_queue()
        assert (first.claimed, first.requests, first.succeeded, first.released) == (5, 2, 2, 3)
        held = queue_rows(app)
        assert len(held) == 3
        for row in held:  # no attempt spent, due when the next window opens
            assert (row["status"], row["attempts"], row["available_at"]) == ("pending", 0, minute + timedelta(minutes=1))
        clock.advance(59)
        assert ext(app).process_queue().claimed == 0
        assert len(endpoint.requests) == 2

        clock.advance(1)  # the next window
        second = ext(app).process_queue()
        assert (second.requests, second.succeeded, second.released) == (2, 2, 1)
        clock.advance(60)
        assert ext(app).process_queue().succeeded == 1
    assert sorted(r.host for r in endpoint.requests) == sorted(HOSTS)
    assert queue_rows(app) == []


def test_split_resends_count_against_the_budget(make_app, endpoint, clock, minute):
    endpoint.script(400)  # the whole batch refused: its halves are sent again
    app = make_app(INDEXNOW_REQUESTS_PER_MINUTE=2)
    with app.app_context():
        ext(app).enqueue_many([f"https://example.com/{i}" for i in range(4)])
        result = ext(app).process_queue()
        assert (result.requests, result.succeeded, result.released) == (2, 2, 2)
        assert [r["attempts"] for r in queue_rows(app)] == [0, 0]
        clock.advance(60)
        assert ext(app).process_queue().succeeded == 2
    assert [len(r.urls) for r in endpoint.requests] == [4, 2, 2]


def test_each_engine_has_its_own_budget(make_app, endpoint, clock, minute):
    with EndpointServer() as other:
        app = make_app(INDEXNOW_ENDPOINTS=[endpoint.url, other.url], INDEXNOW_REQUESTS_PER_MINUTE=2)
        with app.app_context():
            enqueue_hosts(app)
            result = ext(app).process_queue()
            engines = status_document(state_of(app))["engines"]
        assert (len(endpoint.requests), len(other.requests), result.released) == (2, 2, 6)
    assert [e["budget"]["used"] for e in engines] == [2, 2]
    assert engines[0]["budget"]["window_ends"] == (minute + timedelta(minutes=1)).isoformat()


def test_the_budget_is_shared_by_two_apps_on_one_redis(make_app, endpoint, clock, minute, redis_url):
    shared = {
        "CACHE_TYPE": "RedisCache",
        "CACHE_REDIS_URL": redis_url,
        "CACHE_KEY_PREFIX": f"budget-{uuid.uuid4().hex[:8]}:",
        "INDEXNOW_REQUESTS_PER_MINUTE": 3,
    }
    first = make_app(cache=Cache(), **shared)
    second = make_app(cache=Cache(), create_tables=False, **shared)  # same database and tables
    with first.app_context():
        for host in HOSTS[:2]:
            ext(first).enqueue(f"https://{host}/page")
        assert ext(first).process_queue().requests == 2
    with second.app_context():
        for host in HOSTS[2:]:
            ext(second).enqueue(f"https://{host}/page")
        result = ext(second).process_queue()
        assert (result.requests, result.released) == (1, 2)  # one left of three this minute
        assert budget.usage(state_of(second), engines.engine(state_of(second), endpoint.url)).used == 3
        clock.advance(60)
        assert ext(second).process_queue().requests == 2
    assert len(endpoint.requests) == 5


def test_a_cache_outage_falls_back_to_a_per_process_count(make_app, endpoint, clock, minute):
    app = make_app(INDEXNOW_REQUESTS_PER_MINUTE=2)
    with app.app_context():
        state = state_of(app)
        state.cache_breaker._failed("a test", RuntimeError("down"))  # the breaker open: no cache call
        enqueue_hosts(app)
        assert ext(app).process_queue().requests == 2
        assert budget.usage(state, engines.engine(state, endpoint.url)).used == 2


@pytest.mark.parametrize(("value", "message"), [
    (0, "at least 1"), (-3, "at least 1"), (1.5, "whole number"), ("lots", "a number"), (10**6, "at most"),
])
def test_bad_budgets_are_refused_at_init(value, message):
    with pytest.raises(ConfigurationError, match=f"INDEXNOW_REQUESTS_PER_MINUTE must be.*{message}"):
        load_settings({"INDEXNOW_REQUESTS_PER_MINUTE": value})


def test_a_budget_from_the_environment(clock):
    assert load_settings({"INDEXNOW_REQUESTS_PER_MINUTE": "30"}).requests_per_minute == 30
    assert load_settings({}).requests_per_minute is None

