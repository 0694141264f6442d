"""Issue 13 §1 at scale: four worker processes, two engines, one shared queue.

Each engine gets each URL accepted exactly once (no duplicates per engine),
nothing is lost, and one engine's temporary refusals are retried for that
engine only: the other never sees those URLs again.
"""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from .conftest import SERVER_BACKENDS, count, ext
from .servers import Answer, CountingEndpoint, drain_with_workers

#: 20 batches of 400 per engine, as in test_many_workers: the race is in the count of batches.
URLS = 8_000
BATCH = 400
#: One POST per host per batch: the race is in the claims, not the grouping (test_grouping.py).
HOSTS = 5
WORKERS = 4
#: Engine B refuses its first requests with a 503 (no Retry-After): those rows are retried for B alone.
REFUSED = 5


def accepted(server: CountingEndpoint) -> Counter[str]:
    """URLs per count among the requests the engine accepted."""
    counts: Counter[str] = Counter()
    for request in server.requests:
        if 200 <= request.answer.status < 300:
            counts.update(request.urls)
    return counts


@pytest.mark.slow
@pytest.mark.parametrize("backend", SERVER_BACKENDS)
def test_four_workers_two_engines_deliver_each_url_once_per_engine(make_app, counting_endpoint, redis_url, tmp_path):
    refusals = itertools.count()
    second = CountingEndpoint(decide=lambda host, urls: Answer(503 if next(refusals) < REFUSED else 200)).start()
    try:
        app = make_app(
            INDEXNOW_ENDPOINTS=[counting_endpoint.url, second.url],
            INDEXNOW_BATCH_SIZE=BATCH,
            INDEXNOW_RETRY_DELAY=1,
            INDEXNOW_CACHE_TYPE="RedisCache",
            INDEXNOW_CACHE_REDIS_URL=redis_url,
        )
        urls = [f"https://site{n % HOSTS}.example.com/page/{n}" for n in range(URLS)]
        with app.app_context():
            assert ext(app).enqueue_many(urls).queued == URLS
        assert count(app) == 2 * URLS  # one row per engine
        logs = drain_with_workers(app, WORKERS, tmp_path, lambda: count(app))
        expected = Counter(dict.fromkeys(urls, 1))
        assert counting_endpoint.counts == expected  # A: every URL once, never re-sent for B's sake
        assert accepted(second) == expected  # B: every URL accepted once
        refused = [r for r in second.requests if r.answer.status == 503]
        assert len(refused) == REFUSED
        assert count(app, "History", engine=counting_endpoint.url, status="success") == URLS
        assert count(app, "History", engine=second.url, status="success") == URLS
        assert count(app, "History", engine=second.url, status="retry") == sum(len(r.urls) for r in refused)
        assert sum("IndexNow pass" in log and "claimed" in log for log in logs) >= 2, logs  # the work was shared
    finally:
        second.stop()
