"""Figures 3 and 4: draining the queue against the floor, and a pass whose cost stays flat."""

from __future__ import annotations

import functools
import time

from .endpoint import Endpoint
from .harness import Figure, backend_name, ms, side_by_side
from .site import Site, build, fill, floor_drain

HOSTS = 20
#: Rows per pass in the delivery figures: a bulk worker's setting (the default is 100).
BATCH = 1000
#: Figure 3's goal per backend (issue 11): the ratio to the floor.
DELIVERY_GOALS = {"sqlite": 1.2, "postgresql": 1.05}


def drain(site: Site) -> None:
    with site.app.app_context():
        while site.indexnow.process_queue().claimed:
            pass


def delivery(number: int, database_url: str, urls: int, rounds: int) -> Figure:
    """3. Draining ``urls`` queued URLs over 20 hosts: ``process_queue`` vs the floor."""
    with Endpoint() as endpoint:
        site = build(database_url, endpoint.url, INDEXNOW_BATCH_SIZE=BATCH)
        tags = iter(f"{n:04d}" for n in range(10_000))

        def ours() -> float:
            site.clear()
            fill(site, urls, hosts=HOSTS, tag=next(tags))
            started = time.perf_counter()
            drain(site)
            elapsed = time.perf_counter() - started
            assert site.count(site.queue) == 0 and site.count(site.history) == urls
            return elapsed

        def floor() -> float:
            site.clear()
            fill(site, urls, hosts=HOSTS, tag=next(tags))
            started = time.perf_counter()
            moved = floor_drain(site, endpoint.url, BATCH)
            elapsed = time.perf_counter() - started
            assert moved == urls and site.count(site.queue) == 0
            return elapsed

        mine, bare = side_by_side(ours, floor, rounds)
        received = endpoint.stats()["urls"]
    assert received == urls * rounds * 2, "the endpoint did not receive every URL exactly once per run"
    ratio = mine / bare
    name = backend_name(database_url)
    goal = DELIVERY_GOALS.get(name)  # issue 11; MariaDB is reported
    return Figure(
        number, f"delivery: drain {urls:,} URLs / {HOSTS} hosts ({name})",
        f"{ms(mine)} ({urls / mine:,.0f}/s)", f"{ms(bare)} ({urls / bare:,.0f}/s)", ratio,
        f"<= {goal}" if goal else "reported", ratio <= goal if goal else None,
    )


def delivery_engines(number: int, database_url: str, urls: int, rounds: int) -> Figure:
    """3, two engines (INDEXNOW_ENDPOINTS): draining ``urls`` URLs to each of two endpoints vs to one."""
    with Endpoint() as first, Endpoint() as second:
        engines = (first.url, second.url)
        two = build(database_url, first.url, INDEXNOW_BATCH_SIZE=BATCH, INDEXNOW_ENDPOINTS=list(engines))
        one = build(database_url, first.url, INDEXNOW_BATCH_SIZE=BATCH)
        tags = iter(f"{n:04d}" for n in range(10_000))

        def run(site: Site, rows: tuple[str, ...]) -> float:
            site.clear()
            fill(site, urls, hosts=HOSTS, tag=next(tags), engines=rows)
            started = time.perf_counter()
            drain(site)
            elapsed = time.perf_counter() - started
            assert site.count(site.queue) == 0 and site.count(site.history) == urls * len(rows)
            return elapsed

        both, single = side_by_side(lambda: run(two, engines), lambda: run(one, ("",)), rounds)
        received = (first.stats()["urls"], second.stats()["urls"])
    assert received == (urls * rounds * 2, urls * rounds), "an engine did not receive every URL once per run"
    name = backend_name(database_url)
    return Figure(
        number, f"delivery: drain {urls:,} URLs / {HOSTS} hosts to 2 engines vs 1 ({name})",
        f"{ms(both)} ({2 * urls / both:,.0f} rows/s)", f"{ms(single)} ({urls / single:,.0f} rows/s)",
        both / single, "reported (2 x the POSTs and rows: about 2)", None,
    )


def flat_cost(number: int, database_url: str, big: int, small: int, due: int, passes: int) -> Figure:
    """4. One pass over ``due`` due rows with ``big`` rows waiting vs with ``small`` rows waiting."""
    with Endpoint() as endpoint:
        sites = {}
        for name, waiting in (("big", big), ("small", small)):
            site = build(database_url, endpoint.url, INDEXNOW_BATCH_SIZE=due)
            fill(site, waiting, hosts=HOSTS, tag="wait", waiting=True)
            sites[name] = site
        tags = iter(f"{n:04d}" for n in range(10_000))

        def one_pass(name: str) -> float:
            site = sites[name]
            fill(site, due, hosts=HOSTS, tag=next(tags))
            with site.app.app_context():
                started = time.perf_counter()
                result = site.indexnow.process_queue()
                elapsed = time.perf_counter() - started
            assert result.succeeded == due, result
            return elapsed

        for name in sites:  # warm up caches and connections
            one_pass(name)
        large, little = side_by_side(functools.partial(one_pass, "big"), functools.partial(one_pass, "small"), passes)
        assert sites["big"].count(sites["big"].queue) == big  # only the due rows went
        assert sites["small"].count(sites["small"].queue) == small
    ratio = large / little
    return Figure(
        number, f"flat cost: pass over {due:,} due, {big:,} vs {small:,} waiting ({backend_name(database_url)})",
        ms(large), ms(little), ratio, "<= 1.1", ratio <= 1.1,
    )
