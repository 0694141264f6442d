"""Redis goes away under a busy site: pages are still served, ticks carry on without
their lock and cached due time (logged), and the database claim alone keeps
delivery exactly-once (SPEC §5: correctness never rests on the lock).

The test stops a redis-server of its own, never the shared one.
"""

from __future__ import annotations

import logging
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from itertools import cycle

import pytest
import requests

from ..live_server import serve
from .conftest import SERVER_BACKENDS, count, ext
from .servers import PrivateRedis, wait_until

HOSTS = 10
THREADS = 8


def site(make_app, redis: PrivateRedis, endpoint_url: str):
    app = make_app(
        INDEXNOW_ENDPOINT=endpoint_url,
        INDEXNOW_CACHE_TYPE="RedisCache",
        INDEXNOW_CACHE_REDIS_URL=redis.url,
        INDEXNOW_TICK_BATCH_MAX=25,
        INDEXNOW_TICK_LOCK_TTL=1,  # without Redis each process ticks once a second at most
    )
    app.add_url_rule("/", "home", lambda: "hello")
    return app


def browse_until_drained(app, bases: list[str]) -> list[int]:
    """Several visitors request pages in parallel until the queue is empty; returns the statuses."""
    statuses: list[int] = []
    targets = cycle(bases)

    def visit(base: str) -> None:
        response = requests.get(base + "/", timeout=30)
        assert response.text == "hello"
        statuses.append(response.status_code)

    with ThreadPoolExecutor(THREADS) as pool:
        def drained() -> bool:
            list(pool.map(visit, [next(targets) for _ in range(THREADS * 2)]))
            return count(app) == 0
        wait_until(drained, 120, "the ticks to drain the queue", interval=0)
    return statuses


@pytest.mark.parametrize("backend", SERVER_BACKENDS)
def test_ticks_deliver_exactly_once_while_redis_is_down(make_app, counting_endpoint, caplog):
    caplog.set_level(logging.WARNING, logger="flask_indexnow")
    redis = PrivateRedis().start()
    try:
        # Two "web processes" (apps with their own engine and cache client) sharing tables and Redis.
        apps = [site(make_app, redis, counting_endpoint.url) for _ in range(2)]
        first = [f"https://site{n % HOSTS}.example.com/before/{n}" for n in range(100)]
        second = [f"https://site{n % HOSTS}.example.com/during/{n}" for n in range(300)]
        with serve(apps[0]) as base0, serve(apps[1]) as base1:
            with apps[0].app_context():
                ext(apps[0]).enqueue_many(first)
            assert set(browse_until_drained(apps[0], [base0, base1])) == {200}
            assert "cache unavailable" not in caplog.text

            redis.stop()
            with apps[1].app_context():
                assert ext(apps[1]).enqueue_many(second).queued == len(second)  # saving still works
            assert set(browse_until_drained(apps[0], [base0, base1])) == {200}
    finally:
        redis.stop()

    assert counting_endpoint.counts == Counter(dict.fromkeys(first + second, 1))
    assert count(apps[0], "History", status="success") == len(first) + len(second)
    assert count(apps[0], "History") == len(first) + len(second)
    assert "cache unavailable for the tick lock; ticking without it" in caplog.text
    assert "the after-response tick failed" not in caplog.text
