"""SPEC §5: the after-response tick."""

from __future__ import annotations

import logging
import threading
from datetime import timedelta
from typing import Any

import requests
import sqlalchemy as sa
from cachelib import SimpleCache
from flask import Flask

from flask_indexnow import IndexNow
from flask_indexnow.lock import CacheLock
from flask_indexnow.testing import wait_for_tick
from flask_indexnow.tick import LOCK_NAME

from ..conftest import RUN_PREFIX, rows
from ..endpoint_server import Reply
from ..live_server import serve


def ext(app: Flask) -> IndexNow:
    return app.extensions["indexnow"].extension  # type: ignore[no-any-return]


def with_page(app: Flask) -> Flask:
    app.add_url_rule("/", "home", lambda: "hello")
    return app


class QueryCounter:
    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine
        self.statements: list[str] = []

    def __enter__(self) -> QueryCounter:
        sa.event.listen(self.engine, "before_cursor_execute", self._count)
        return self

    def __exit__(self, *exc: Any) -> None:
        sa.event.remove(self.engine, "before_cursor_execute", self._count)

    def _count(self, conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        self.statements.append(statement)


def test_tick_runs_after_the_response_is_sent(make_app, endpoint) -> None:
    app = with_page(make_app())
    page_received = threading.Event()
    order: list[str] = []

    def decide(request):
        # Runs in the endpoint while the tick's POST is in flight: the visitor
        # must already hold the page, or the tick ran before the response.
        order.append("visitor had the page" if page_received.wait(10) else "tick ran first")
        return Reply(200)

    endpoint.decide = decide
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
    with serve(app) as base:
        response = requests.get(base + "/", timeout=10)
        assert response.text == "hello"
        page_received.set()
        for _ in range(200):
            if rows(app) == [] and order:
                break
            threading.Event().wait(0.05)
    assert order == ["visitor had the page"]
    assert endpoint.urls_received() == ["https://example.com/a"]
    assert [r.status for r in rows(app, "History")] == ["success"]


def test_one_tick_per_request(make_app, endpoint) -> None:
    app = make_app(INDEXNOW_TICK_BATCH_MAX=1, INDEXNOW_BATCH_SIZE=10)
    app.add_url_rule("/", "home", lambda: "hello")
    with app.app_context():
        ext(app).enqueue_many([f"https://example.com/{n}" for n in range(5)])
    client = app.test_client()
    response = client.get("/")
    response.close()
    assert wait_for_tick(app)
    assert len(rows(app)) == 4  # one tick, limited to INDEXNOW_TICK_BATCH_MAX rows


def test_tick_takes_at_most_tick_batch_max(app: Flask, endpoint) -> None:
    ext(app).enqueue_many([f"https://example.com/{n}" for n in range(40)])
    result = ext(app).tick()
    assert result is not None and result.claimed == 25
    assert len(rows(app)) == 15


def test_batch_size_caps_the_tick_too(make_app, endpoint) -> None:
    app = make_app(INDEXNOW_BATCH_SIZE=3)
    with app.app_context():
        ext(app).enqueue_many([f"https://example.com/{n}" for n in range(10)])
        assert ext(app).tick().claimed == 3


def test_idle_site_makes_no_query(app: Flask, endpoint) -> None:
    state = app.extensions["indexnow"]
    assert ext(app).tick() is not None  # first tick: learns that nothing is due
    with QueryCounter(state.db.engine) as counter:
        for _ in range(20):
            assert ext(app).tick() is None
    assert counter.statements == []


def test_enqueue_wakes_the_idle_tick(app: Flask, endpoint) -> None:
    ext(app).tick()
    assert ext(app).tick() is None
    ext(app).enqueue("https://example.com/new")
    result = ext(app).tick()
    assert result is not None and result.succeeded == 1


def test_future_row_keeps_the_tick_idle_until_due(app: Flask, endpoint, clock) -> None:
    ext(app).enqueue("https://example.com/later", available_at=clock.now.replace(microsecond=0) + timedelta(minutes=30))
    ext(app).tick()
    state = app.extensions["indexnow"]
    with QueryCounter(state.db.engine) as counter:
        clock.advance(20)
        assert ext(app).tick() is None
    assert counter.statements == []
    clock.advance(minutes=31)
    assert ext(app).tick().succeeded == 1


def test_commit_false_wakes_the_tick_only_after_commit(app: Flask, endpoint) -> None:
    db = app.extensions["indexnow"].db
    ext(app).tick()
    ext(app).enqueue("https://example.com/a", commit=False)
    assert ext(app).tick() is None  # not committed yet: the cached time is untouched
    db.session.commit()
    assert ext(app).tick().succeeded == 1


def test_a_held_lock_stops_the_tick(app: Flask, endpoint) -> None:
    state = app.extensions["indexnow"]
    ext(app).enqueue("https://example.com/a")
    other = CacheLock(state.cache, state.cache_key(LOCK_NAME), 55)
    assert other.acquire()
    assert ext(app).tick() is None
    assert len(rows(app)) == 1
    other.release()
    assert ext(app).tick().succeeded == 1


def test_the_lock_is_released_after_the_tick(app: Flask, endpoint) -> None:
    state = app.extensions["indexnow"]
    ext(app).enqueue("https://example.com/a")
    ext(app).tick()
    assert state.cache.get(state.cache_key(LOCK_NAME)) is None


class ForgetfulCache(SimpleCache):
    """A backend whose add() ignores the TTL, as some do."""

    def add(self, key: str, value: Any, timeout: int | None = None) -> bool:
        return super().add(key, value, timeout=0)


def forgetful_factory(app: Flask, config: dict, args: list, kwargs: dict) -> ForgetfulCache:
    return ForgetfulCache()


def test_lock_of_a_crashed_process_expires_even_if_add_ignores_ttl(make_app, endpoint, clock) -> None:
    app = make_app(INDEXNOW_CACHE_TYPE=f"{__name__}.forgetful_factory")
    with app.app_context():
        state = app.extensions["indexnow"]
        crashed = CacheLock(state.cache, state.cache_key(LOCK_NAME), 55)
        assert crashed.acquire()  # never released: its process "crashed"
        ext(app).enqueue("https://example.com/a")
        assert ext(app).tick() is None
        clock.advance(56)
        assert ext(app).tick().succeeded == 1


def test_redis_lock_is_shared_between_processes(make_app, endpoint, redis_url) -> None:
    config = {"INDEXNOW_CACHE_TYPE": "RedisCache", "INDEXNOW_CACHE_REDIS_URL": redis_url}
    one = make_app(**config)
    two = make_app(**config, INDEXNOW_CACHE_KEY_PREFIX=one.config["INDEXNOW_CACHE_KEY_PREFIX"])
    with one.app_context():
        ext(one).enqueue("https://example.com/a")
        state = one.extensions["indexnow"]
        held = CacheLock(state.cache, state.cache_key(LOCK_NAME), 55)
        assert held.acquire()
    with two.app_context():
        assert ext(two).tick() is None  # the other "process" holds the lock in Redis
    with one.app_context():
        held.release()
    with two.app_context():
        assert ext(two).tick().succeeded == 1


def test_queue_disabled_schedules_no_tick_but_tick_runs_by_hand(make_app, endpoint) -> None:
    app = with_page(make_app(INDEXNOW_QUEUE_ENABLED=False))
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
    app.test_client().get("/").close()
    assert wait_for_tick(app)
    assert len(rows(app)) == 1
    with app.app_context():
        assert ext(app).tick().succeeded == 1


def test_a_failing_tick_never_reaches_the_visitor(make_app, caplog) -> None:
    app = with_page(make_app(create_tables=False, INDEXNOW_TABLE_PREFIX=f"{RUN_PREFIX}missing_"))
    with caplog.at_level(logging.ERROR, logger="flask_indexnow"), serve(app) as base:
        assert requests.get(base + "/", timeout=10).text == "hello"
        assert requests.get(base + "/", timeout=10).status_code == 200
        for _ in range(100):
            if "tick failed" in caplog.text:
                break
            threading.Event().wait(0.05)
    assert "the after-response tick failed" in caplog.text


def test_one_tick_per_process_at_a_time(app: Flask, endpoint) -> None:
    """A burst of requests never queues threads behind a running tick."""
    in_flight = threading.Event()
    release = threading.Event()

    def decide(request):
        in_flight.set()
        release.wait(10)
        return Reply(200)

    endpoint.decide = decide
    ext(app).enqueue("https://example.com/a")
    results = []
    first = threading.Thread(target=lambda: results.append(_tick_in(app)))
    first.start()
    assert in_flight.wait(10)
    state = app.extensions["indexnow"]
    with QueryCounter(state.db.engine) as counter:
        assert ext(app).tick() is None  # returns at once: this process is ticking already
    release.set()
    first.join(10)
    assert counter.statements == []
    assert results[0].succeeded == 1


def _tick_in(app: Flask):
    with app.app_context():
        return ext(app).tick()
