"""``python -m benchmarks`` (or ``python3 dev.py bench``): every figure of the Performance table.

    python -m benchmarks            # full size (several minutes; run it on a quiet machine)
    python -m benchmarks --quick    # small sizes, to check that everything runs
    python -m benchmarks --only 3,5 # some figures only

PostgreSQL comes from INDEXNOW_TEST_POSTGRES_URL (default: the local test
server); SQLite files live in a temporary directory. Every table is made
with a prefix of its own and dropped at the end.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

import sqlalchemy as sa

from . import (
    delivery,
    editing,
    enqueue,
    last_seen,
    metrics,
    processes,
    schedules,
    sitemap,
    verification,
    watched_save,
    web,
)
from .harness import Figure, machine, table
from .site import MYSQL_URL, POSTGRES_URL, drop_all


@dataclass(frozen=True)
class Sizes:
    overhead_rounds: int = 15
    overhead_requests: int = 200
    save_rounds: int = 7
    saves: int = 20
    delivery_urls: int = 20_000
    delivery_rounds: int = 5
    flat_big: int = 1_000_000
    flat_small: int = 10_000
    flat_due: int = 1_000
    flat_passes: int = 7
    bulk_urls: int = 10_000
    bulk_rounds: int = 5
    single_count: int = 300
    single_rounds: int = 5
    scaling_urls: int = 20_000
    scaling_rounds: int = 5
    memory_urls: int = 10_000
    last_seen_rounds: int = 15
    last_seen_requests: int = 200
    verify_urls: int = 500
    verify_rounds: int = 9
    sitemap_big: int = 1_000_000
    sitemap_small: int = 100_000
    scrape_big: int = 1_000_000
    scrape_small: int = 10_000
    scrapes: int = 61  # interleaved, medians: 15 a side left the ratio within the noise of the goal
    runs_big: int = 500_000
    runs_small: int = 1_000
    runs_rounds: int = 7
    watched_rounds: int = 9
    watched_saves: int = 100
    editing_rounds: int = 4
    editing_requests: int = 2_000
    related_save_rounds: int = 7
    related_saves: int = 200


QUICK = Sizes(
    overhead_rounds=3, overhead_requests=50, save_rounds=3, saves=5, delivery_urls=2_000, delivery_rounds=1,
    flat_big=50_000, flat_small=5_000, flat_due=200, flat_passes=3, bulk_urls=2_000, bulk_rounds=2,
    single_count=50, single_rounds=2, scaling_urls=4_000, scaling_rounds=1, memory_urls=2_000,
    last_seen_rounds=5, last_seen_requests=50, verify_urls=100, verify_rounds=3, sitemap_big=50_000,
    sitemap_small=5_000, scrape_big=50_000, scrape_small=5_000, scrapes=5,
    runs_big=50_000, runs_small=500, runs_rounds=3, watched_rounds=3, watched_saves=20, editing_rounds=2,
    editing_requests=80, related_save_rounds=2, related_saves=30,
)


def postgres_available() -> str | None:
    """The PostgreSQL version, or None when the server does not answer."""
    try:
        engine = sa.create_engine(POSTGRES_URL)
        with engine.connect() as connection:
            text = str(connection.execute(sa.text("SHOW server_version")).scalar())
        engine.dispose()
        return text
    except Exception as exc:  # noqa: BLE001
        print(f"PostgreSQL not reachable ({str(exc).splitlines()[0]}): its figures are skipped", file=sys.stderr)
        return None


def mariadb_available() -> str | None:
    """The MariaDB/MySQL version, or None when the server does not answer."""
    try:
        engine = sa.create_engine(MYSQL_URL)
        with engine.connect() as connection:
            text = str(connection.execute(sa.text("SELECT VERSION()")).scalar())
        engine.dispose()
        return text
    except Exception as exc:  # noqa: BLE001
        print(f"MariaDB not reachable ({str(exc).splitlines()[0]}): its figures are skipped", file=sys.stderr)
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, to check that everything runs")
    parser.add_argument("--only", default="", help="comma-separated figure numbers (1-15)")
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else Sizes()
    wanted = {int(n) for n in args.only.split(",") if n.strip()} or set(range(1, 16))
    pg_version = postgres_available()
    maria_version = mariadb_available()

    print("Flask-IndexNow benchmarks" + (" (quick sizes)" if args.quick else ""))
    for name, value in machine() + [
        ("PostgreSQL", pg_version or "not reachable"),
        ("MariaDB", maria_version or "not reachable"),
        ("SQLite", sqlite3.sqlite_version),
        ("Libraries", ", ".join(f"{p} {version(p)}" for p in ("flask", "sqlalchemy", "psycopg", "requests"))),
    ]:
        print(f"  {name}: {value}")
    print(flush=True)

    figures: list[Figure] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="indexnow-bench-") as tmp:
        work = Path(tmp)
        sqlite_url = f"sqlite:///{work / 'bench.db'}"
        s = sizes
        # The second field names the server a figure needs ("" for none).
        plan: list[tuple[int, str, Callable[[], Figure | list[Figure]]]] = [
            (1, "", lambda: web.request_overhead(work, s.overhead_rounds, s.overhead_requests)),
            (2, "pg", lambda: web.save_latency(POSTGRES_URL, s.save_rounds, s.saves)),
            (3, "", lambda: delivery.delivery(3, sqlite_url, s.delivery_urls, s.delivery_rounds)),
            (3, "pg", lambda: delivery.delivery(3, POSTGRES_URL, s.delivery_urls, s.delivery_rounds)),
            (3, "maria", lambda: delivery.delivery(3, MYSQL_URL, s.delivery_urls, s.delivery_rounds)),
            (3, "pg", lambda: delivery.delivery_engines(3, POSTGRES_URL, s.delivery_urls, s.delivery_rounds)),
            (4, "", lambda: delivery.flat_cost(4, f"sqlite:///{work / 'flat.db'}", s.flat_big, s.flat_small,
                                                  s.flat_due, s.flat_passes)),
            (4, "pg", lambda: delivery.flat_cost(4, POSTGRES_URL, s.flat_big, s.flat_small, s.flat_due,
                                                 s.flat_passes)),
            (5, "pg", lambda: enqueue.bulk(5, POSTGRES_URL, s.bulk_urls, s.bulk_rounds)),
            (5, "", lambda: enqueue.bulk(5, f"sqlite:///{work / 'bulk.db'}", s.bulk_urls, s.bulk_rounds)),
            (5, "maria", lambda: enqueue.bulk(5, MYSQL_URL, s.bulk_urls, s.bulk_rounds)),
            (5, "pg", lambda: enqueue.single(5, POSTGRES_URL, s.single_count, s.single_rounds)),
            (6, "pg", lambda: processes.scaling(6, POSTGRES_URL, s.scaling_urls, s.scaling_rounds)),
            (6, "pg", lambda: processes.scaling(6, POSTGRES_URL, s.scaling_urls, s.scaling_rounds, engines=2)),
            (7, "pg", lambda: processes.peak_memory(7, POSTGRES_URL, s.memory_urls)),
            (7, "", lambda: processes.peak_memory(7, f"sqlite:///{work / 'memory.db'}", s.memory_urls)),
            (8, "", lambda: last_seen.last_seen(8, sqlite_url, work, s.last_seen_rounds, s.last_seen_requests)),
            (8, "pg", lambda: last_seen.last_seen(8, POSTGRES_URL, None, s.last_seen_rounds, s.last_seen_requests)),
            (9, "", lambda: verification.verification(9, f"sqlite:///{work / 'verify.db'}", s.verify_urls,
                                                      s.verify_rounds)),
            (9, "pg", lambda: verification.verification(9, POSTGRES_URL, s.verify_urls, s.verify_rounds)),
            (10, "", lambda: sitemap.sitemap_build(10, f"sqlite:///{work / 'sitemap.db'}", s.sitemap_big,
                                                    s.sitemap_small)),
            (10, "pg", lambda: sitemap.sitemap_build(10, POSTGRES_URL, s.sitemap_big, s.sitemap_small)),
            (11, "pg", lambda: metrics.scrape_cost(11, POSTGRES_URL, s.scrape_big, s.scrape_small, s.scrapes)),
            (11, "", lambda: metrics.scrape_cost(11, f"sqlite:///{work / 'scrape.db'}", s.scrape_big, s.scrape_small,
                                                s.scrapes)),
            (12, "", lambda: schedules.last_outcome(12, f"sqlite:///{work / 'runs.db'}", s.runs_big, s.runs_small,
                                                    s.runs_rounds)),
            (12, "pg", lambda: schedules.last_outcome(12, POSTGRES_URL, s.runs_big, s.runs_small, s.runs_rounds)),
            (12, "maria", lambda: schedules.last_outcome(12, MYSQL_URL, s.runs_big, s.runs_small, s.runs_rounds)),
            (13, "pg", lambda: watched_save.watched_save(13, POSTGRES_URL, s.watched_rounds, s.watched_saves)),
            (13, "maria", lambda: watched_save.watched_save(13, MYSQL_URL, s.watched_rounds, s.watched_saves)),
            (14, "pg", lambda: editing.editing_workload(14, POSTGRES_URL, s.editing_rounds, s.editing_requests)),
            (14, "", lambda: editing.editing_workload(14, f"sqlite:///{work / 'blog.db'}", s.editing_rounds,
                                                      s.editing_requests)),
            (15, "pg", lambda: editing.watched_save(15, POSTGRES_URL, s.related_save_rounds, s.related_saves)),
        ]
        try:
            available = {"": True, "pg": pg_version is not None, "maria": maria_version is not None}
            for number, server, run in plan:
                if number not in wanted or not available[server]:
                    continue
                result = run()
                for figure in result if isinstance(result, list) else [result]:
                    figures.append(figure)
                    ratio = "-" if figure.ratio is None else f"{figure.ratio:.3f}"
                    print(f"  [{number}] {figure.name}: {figure.ours} vs {figure.floor} -> {ratio} "
                          f"(goal {figure.goal})", flush=True)
        finally:
            drop_all()
    print(f"\nDone in {time.perf_counter() - started:.0f}s.\n")
    print(table(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
