"""Figure 11: one scrape of ``{prefix}/metrics`` with 1,000,000 rows queued vs 10,000."""

from __future__ import annotations

import functools
import time

from prometheus_client.parser import text_string_to_metric_families

from .endpoint import Endpoint
from .harness import Figure, backend_name, ms, side_by_side
from .site import build, fill

TOKEN = "bench-metrics-token-0000"
#: Figure 11's goal per backend (issue 22): above 10,000 rows both count in sampled id windows
#: (see flask_indexnow/metrics/counts.py).
GOALS = {"postgresql": 1.2, "sqlite": 1.2}
#: Scrapes of each side before the timed ones: connections, statement caches, the pages of the indexes.
WARM_UP = 5


def scrape_cost(number: int, database_url: str, big: int, small: int, scrapes: int) -> Figure:
    """11. The median time of one scrape (in process, through the route) with ``big`` vs ``small`` rows waiting.

    :data:`WARM_UP` scrapes of each first, then ``scrapes`` of each, interleaved (the order reversed every
    round), so that a burst of load on the machine falls on both sides alike; medians.
    """
    with Endpoint() as endpoint:
        clients = {}
        for name, waiting in (("big", big), ("small", small)):
            site = build(database_url, endpoint.url, INDEXNOW_METRICS_TOKEN=TOKEN)
            fill(site, waiting, tag="wait", waiting=True)
            clients[name] = (site.app.test_client(), waiting)

        def scrape(name: str) -> float:
            client, waiting = clients[name]
            started = time.perf_counter()
            response = client.get("/indexnow/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
            elapsed = time.perf_counter() - started
            assert response.status_code == 200, response.data[:300]
            pending = [s.value for f in text_string_to_metric_families(response.get_data(as_text=True))
                       for s in f.samples if s.name == "indexnow_queue_urls" and s.labels["status"] == "pending"]
            # Exact up to the limit; above it the sampled windows' estimate (exact on this even queue).
            assert pending and abs(pending[0] - waiting) <= waiting / 10, (pending, waiting)
            return elapsed

        for _ in range(WARM_UP):
            for name in clients:
                scrape(name)
        large, little = side_by_side(functools.partial(scrape, "big"), functools.partial(scrape, "small"), scrapes)
    ratio = large / little
    backend = backend_name(database_url)
    goal = GOALS.get(backend)
    return Figure(
        number, f"metrics: one scrape, {big:,} vs {small:,} rows queued ({backend})", ms(large), ms(little), ratio,
        f"<= {goal}" if goal else "reported", ratio <= goal if goal else None,
    )
