"""Figure 5: writing to the queue, against bare INSERTs of the same rows."""

from __future__ import annotations

import hashlib
import time
from typing import Any

from .harness import Figure, backend_name, interleave, median, ms, side_by_side
from .site import Site, build, utcnow

HOSTS = 20
#: Figure 5a's goal per backend (issue 11): the ratio to a plain executemany.
BULK_GOALS = {"sqlite": 1.15, "postgresql": 1.1, "mysql": 1.5}
_COLUMNS = "host, url, url_hash, action, status, attempts, available_at, created_at, updated_at"


def _urls(tag: str, count: int) -> list[str]:
    return [f"https://site{n % HOSTS}.example.com/{tag}/{n}" for n in range(count)]


def _bare_rows(site: Site, urls: list[str]) -> tuple[str, list[tuple[Any, ...]]]:
    """The INSERT and the rows a plain executemany writes (prepared before the clock starts)."""
    dialect = site.engine().dialect.name
    p = "?" if dialect == "sqlite" else "%s"
    now = utcnow().replace(tzinfo=None)
    stamp: Any = now.isoformat(sep=" ") if dialect == "sqlite" else now
    rows = [
        (url.split("/")[2], url, hashlib.sha256(url.encode()).hexdigest(), "update", "pending", 0, stamp, stamp, stamp)
        for url in urls
    ]
    return f"INSERT INTO {site.queue.name} ({_COLUMNS}) VALUES ({', '.join([p] * 9)})", rows


def bulk(number: int, database_url: str, count: int, rounds: int) -> Figure:
    """5a. ``enqueue_many`` of ``count`` URLs vs a plain DB-API executemany INSERT of the same rows."""
    site = build(database_url, "http://127.0.0.1:9/indexnow")
    tags = iter(f"t{n}" for n in range(10_000))

    def ours() -> float:
        site.clear()
        urls = _urls(next(tags), count)
        with site.app.app_context():
            started = time.perf_counter()
            result = site.indexnow.enqueue_many(urls)
            elapsed = time.perf_counter() - started
            site.db.session.remove()
        assert result.queued == count
        return elapsed

    def floor() -> float:
        site.clear()
        sql, rows = _bare_rows(site, _urls(next(tags), count))
        raw = site.engine().raw_connection()
        try:
            started = time.perf_counter()
            cursor = raw.cursor()
            cursor.executemany(sql, rows)
            raw.commit()
            elapsed = time.perf_counter() - started
        finally:
            raw.close()
        assert site.count(site.queue) == count
        return elapsed

    ours()  # warm up
    mine, bare = side_by_side(ours, floor, rounds)
    ratio = mine / bare
    name = backend_name(database_url)
    goal = BULK_GOALS.get(name, 1.5)
    return Figure(number, f"bulk enqueue_many of {count:,} URLs vs executemany INSERT ({name})",
                  ms(mine), ms(bare), ratio, f"<= {goal}", ratio <= goal,
                  f"bulk enqueue ({name}): ours validates and normalises each URL, hashes it (PostgreSQL: in "
                  "SQL) and upserts (last event wins); the floor inserts rows prepared beforehand.")


def single(number: int, database_url: str, count: int, rounds: int) -> Figure:
    """5b. ``enqueue(url)`` (own commit) vs a bare one-row INSERT + COMMIT, ``count`` times in a row."""
    site = build(database_url, "http://127.0.0.1:9/indexnow")
    tags = iter(f"s{n}" for n in range(10_000))

    def ours() -> float:
        site.clear()
        urls = _urls(next(tags), count)
        with site.app.app_context():
            started = time.perf_counter()
            for url in urls:
                site.indexnow.enqueue(url)
            elapsed = time.perf_counter() - started
            site.db.session.remove()
        return elapsed / count

    def floor() -> float:
        site.clear()
        sql, rows = _bare_rows(site, _urls(next(tags), count))
        raw = site.engine().raw_connection()
        try:
            cursor = raw.cursor()
            started = time.perf_counter()
            for row in rows:
                cursor.execute(sql, row)
                raw.commit()
            elapsed = time.perf_counter() - started
        finally:
            raw.close()
        return elapsed / count

    def pooled() -> float:
        """The floor as a library must do it: a connection from the pool for each INSERT + COMMIT.

        Not the goal's floor; printed beside it, because a library cannot keep
        one connection checked out between two calls of the site's code.
        """
        site.clear()
        sql, rows = _bare_rows(site, _urls(next(tags), count))
        engine = site.engine()
        started = time.perf_counter()
        for row in rows:
            raw = engine.raw_connection()
            try:
                raw.cursor().execute(sql, row)
                raw.commit()
            finally:
                raw.close()
        return (time.perf_counter() - started) / count

    ours()  # warm up
    timings = interleave({"ours": ours, "floor": floor, "pooled": pooled}, rounds)
    mine, bare, checked_out = (median(timings[name]) for name in ("ours", "floor", "pooled"))
    ratio = mine / bare
    name = backend_name(database_url)
    return Figure(number, f"single enqueue() vs one-row INSERT + COMMIT ({name})", ms(mine), ms(bare), ratio,
                  "<= 1.4", ratio <= 1.4,
                  f"single enqueue ({name}): the floor keeps one connection for every call; with a connection "
                  f"from the pool per call (as any library must) it takes {ms(checked_out)}, "
                  f"{checked_out / bare:.3f} x the floor, and ours is {mine / checked_out:.3f} x that.")
