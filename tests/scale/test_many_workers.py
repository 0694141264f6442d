"""Several worker processes share one queue; every URL is claimed and delivered exactly once."""

from __future__ import annotations

from collections import Counter

import pytest

from .conftest import SERVER_BACKENDS, count, ext
from .servers import drain_with_workers

#: 20 batches of 400 (80 URLs a host each): five claims per worker, enough for all four to race
#: for every batch. The count of batches is what the race needs; bigger batches only take longer.
URLS = 8_000
BATCH = 400
#: One POST per host per batch: the race is in the claims, not the grouping (test_grouping.py).
HOSTS = 5
WORKERS = 4


@pytest.mark.slow
@pytest.mark.parametrize("backend", SERVER_BACKENDS)
def test_four_workers_deliver_8000_urls_exactly_once(make_app, counting_endpoint, redis_url, tmp_path):
    app = make_app(
        INDEXNOW_ENDPOINT=counting_endpoint.url,
        INDEXNOW_BATCH_SIZE=BATCH,
        INDEXNOW_CACHE_TYPE="RedisCache",
        INDEXNOW_CACHE_REDIS_URL=redis_url,
    )
    urls = [f"https://site{n % HOSTS}.example.com/page/{n}" for n in range(URLS)]

    def fill() -> None:
        with app.app_context():
            assert ext(app).enqueue_many(urls).queued == URLS

    logs = drain_with_workers(app, WORKERS, tmp_path, lambda: count(app), fill=fill)
    assert counting_endpoint.counts == Counter(dict.fromkeys(urls, 1))
    assert count(app, "History") == URLS
    assert count(app, "History", status="success") == URLS
    assert count(app) == 0
    # The work was shared: more than one process claimed rows.
    assert sum("IndexNow pass endpoint=" in log for log in logs) >= 2, logs
