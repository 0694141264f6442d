"""Figures 14 and 15: what the extension costs an editing site (issue 19).

14. An editing workload (saves and page views, 4 client threads) against a blog
   served by gunicorn with 4 sync workers, a real local endpoint answering in
   50 ms: without the extension, with it (the background ticker), and with it
   ticking in the close callback as before (the request's worker busy for the
   tick). Latency median and p95 per variant, interleaved rounds.
15. One watched save (``related=`` and ``fields=``) against the same save of an
   unwatched model, in process, PostgreSQL: the cost the save's transaction pays.
"""

from __future__ import annotations

import functools
import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time
from typing import Any

import requests
import sqlalchemy as sa

from . import blog_server
from .endpoint import Endpoint
from .harness import Figure, backend_name, interleave, median, ms
from .site import new_prefix, register

WORKERS = 4
CLIENTS = 4
#: One save in this many requests; the others are page views.
SAVE_EVERY = 5
#: The paced rounds send this share of the requests per second the plain blog served flat out.
HALF_LOAD = 0.5
#: name → (blog variant, INDEXNOW_TICK_MODE, other settings). "ticker" runs the defaults; "ticker_fast" the
#: tick delay of the first release of the tick thread (0.5 s), to show what the delay buys.
VARIANTS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "plain": ("plain", "auto", {}),
    "ticker": ("ext", "thread", {}),
    "ticker_fast": ("ext", "thread", {"INDEXNOW_TICK_DELAY": 0.5}),
    "close": ("ext", "after-response", {}),
}
#: Seconds after every round, untimed: the tick a round's last saves woke (INDEXNOW_TICK_DELAY, 2 s,
#: later) runs here, not in the next variant's round. The note says how many POSTs fell here.
SETTLE = 3.0


class Gunicorn:
    """gunicorn with WORKERS sync workers serving one variant of the blog."""

    def __init__(self, config: dict[str, Any]) -> None:
        import socket

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = int(sock.getsockname()[1])
        env = dict(os.environ, **{blog_server.CONFIG_ENV: json.dumps(config)})
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "--workers", str(WORKERS), "--worker-class", "sync",
             "--bind", f"127.0.0.1:{self.port}", "--log-level", "warning", "benchmarks.blog_server:create_app()"],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                if requests.get(f"{self.base}/posts/1", timeout=2).status_code == 200:
                    break
            except requests.RequestException:
                pass
            if time.monotonic() > deadline or self.process.poll() is not None:
                self.stop()
                raise RuntimeError("gunicorn did not start")
            time.sleep(0.2)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)


def _workload(base: str, requests_per_round: int, latencies: list[float], rate: float | None = None) -> float:
    """CLIENTS threads share ``requests_per_round`` requests (one save in SAVE_EVERY); returns the seconds.

    Without ``rate`` each client sends its next request as soon as the last one answered (the
    server is as busy as it can be). With ``rate`` (requests per second, all clients together) the
    requests are sent on a fixed timetable, as visitors arrive, and a request's latency counts from
    the moment it was due, so time spent waiting behind a slow earlier request is counted too.
    """
    lock = threading.Lock()
    per_client = requests_per_round // CLIENTS
    interval = CLIENTS / rate if rate else 0.0
    begin = time.perf_counter()

    def client(seed: int) -> None:
        rng = random.Random(seed)
        session = requests.Session()
        mine: list[float] = []
        for n in range(per_client):
            post = rng.randint(1, blog_server.POSTS)
            started = time.perf_counter()
            if rate:
                started = begin + (n + seed / CLIENTS) * interval
                time.sleep(max(0.0, started - time.perf_counter()))
            if n % SAVE_EVERY == 0:
                response = session.post(f"{base}/posts/{post}", data={"body": f"revision {seed} {n}"}, timeout=30)
            else:
                response = session.get(f"{base}/posts/{post}", timeout=30)
            mine.append(time.perf_counter() - started)
            assert response.status_code == 200, response.status_code
        session.close()
        with lock:
            latencies.extend(mine)

    started = time.perf_counter()
    threads = [threading.Thread(target=client, args=(k,)) for k in range(CLIENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - started


def _p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1]


def _own_file(database_url: str, name: str) -> str:
    """On SQLite, a database file per variant: one variant's writes (a tick still finishing) never lock another's."""
    url = sa.engine.make_url(database_url)
    if url.get_backend_name() != "sqlite" or not url.database:
        return database_url
    stem, dot, suffix = url.database.rpartition(".")
    return url.set(database=f"{stem}-{name}{dot}{suffix}" if dot else f"{url.database}-{name}").render_as_string()


class Settled:
    """A variant's workload, then SETTLE seconds untimed; counts the endpoint's POSTs in each part."""

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self.timed: dict[str, int] = {}
        self.settling: dict[str, int] = {}

    def run(self, name: str, *args: Any, **kwargs: Any) -> float:
        start = self.endpoint.stats()["requests"]
        took = _workload(*args, **kwargs)
        timed = self.endpoint.stats()["requests"]
        time.sleep(SETTLE)
        self.timed[name] = self.timed.get(name, 0) + timed - start
        self.settling[name] = self.settling.get(name, 0) + self.endpoint.stats()["requests"] - timed
        return took


def editing_workload(number: int, database_url: str, rounds: int, requests_per_round: int) -> list[Figure]:
    with Endpoint(delay=0.05) as endpoint:
        servers: dict[str, Gunicorn] = {}
        try:
            for name, (variant, tick_mode, settings) in VARIANTS.items():
                config = {"database_url": _own_file(database_url, name), "prefix": new_prefix(),
                          "endpoint_url": endpoint.url, "variant": variant, "tick_mode": tick_mode,
                          "settings": settings}
                app, db, post = blog_server.build(config)
                register(db, blog_server.seed(app, db, post), app)
                servers[name] = Gunicorn(config)
            latencies: dict[str, list[float]] = {name: [] for name in servers}
            for server in servers.values():  # warm up every worker
                _workload(server.base, CLIENTS * 10, [])
            settled = Settled(endpoint)
            busy = interleave({name: functools.partial(settled.run, name, server.base, requests_per_round,
                                                       latencies[name])
                               for name, server in servers.items()}, rounds)
            # The same at half the rate the plain blog managed: a site that is not saturated.
            rate = HALF_LOAD * requests_per_round / median(busy["plain"])
            paced: dict[str, list[float]] = {name: [] for name in servers}
            interleave({name: functools.partial(settled.run, name, server.base, requests_per_round // 2,
                                                paced[name], rate)
                        for name, server in servers.items()}, rounds)
            time.sleep(1.0)  # the last ticks
            delivered = endpoint.stats()["urls"]
        finally:
            for server in servers.values():
                server.stop()
    assert delivered > 0, "the extension's variants delivered nothing"
    backend = backend_name(database_url)
    med = {name: median(values) for name, values in latencies.items()}
    p95 = {name: _p95(values) for name, values in latencies.items()}
    note = (f"editing workload: {rounds} interleaved rounds of {requests_per_round} requests (one save in "
            f"{SAVE_EVERY}) from {CLIENTS} client threads, gunicorn {WORKERS} sync workers, endpoint 50 ms; "
            f"ticking in the close callback instead (before issue 19): median {ms(med['close'])} "
            f"({med['close'] / med['plain']:.3f}), p95 {ms(p95['close'])} ({p95['close'] / p95['plain']:.3f}); "
            f"with INDEXNOW_TICK_DELAY = 0.5: median {ms(med['ticker_fast'])} ({med['ticker_fast'] / med['plain']:.3f}), "
            f"p95 {ms(p95['ticker_fast'])} ({p95['ticker_fast'] / p95['plain']:.3f}); "
            f"{delivered} URLs delivered in all; the tick thread's POSTs: {settled.timed['ticker']} within the "
            f"timed rounds, {settled.settling['ticker']} in the {SETTLE:.0f} s pauses after them.")
    paced_note = (f"editing workload at half load: {rate:.0f} requests/s on a timetable ({HALF_LOAD:.0%} of what "
                  f"the plain blog served flat out), {rounds} interleaved rounds of {requests_per_round // 2}; "
                  f"ticking in the close callback instead: median {ms(median(paced['close']))}, "
                  f"p95 {ms(_p95(paced['close']))}; with INDEXNOW_TICK_DELAY = 0.5: median "
                  f"{ms(median(paced['ticker_fast']))} ({median(paced['ticker_fast']) / median(paced['plain']):.3f}), "
                  f"p95 {ms(_p95(paced['ticker_fast']))} ({_p95(paced['ticker_fast']) / _p95(paced['plain']):.3f}).")
    figures = []
    for load, lats, text in (("", latencies, note), (", half load", paced, paced_note)):
        for label, measure in (("median", median), ("p95", _p95)):
            ours, plain = measure(lats["ticker"]), measure(lats["plain"])
            figures.append(Figure(number, f"editing workload{load}, request latency {label} ({backend}, 4 sync workers)",
                                  ms(ours), ms(plain), ours / plain, "<= 1.05", ours / plain <= 1.05, text))
    return figures


def watched_save(number: int, database_url: str, rounds: int, saves: int) -> Figure:
    sites = {}
    for name in ("watched", "plain"):
        config = {"database_url": database_url, "prefix": new_prefix(), "endpoint_url": "http://127.0.0.1:9/indexnow",
                  "variant": "ext" if name == "watched" else "plain"}
        app, db, post = blog_server.build(config)
        register(db, blog_server.seed(app, db, post), app)
        sites[name] = (app, db, post)

    def sample(name: str) -> float:
        app, db, post = sites[name]
        with app.app_context():
            started = time.perf_counter()
            for n in range(saves):
                item = db.session.get(post, 1 + n % blog_server.POSTS)
                item.body = f"revision {time.perf_counter_ns()}"
                db.session.commit()
            elapsed = time.perf_counter() - started
            db.session.remove()
        return elapsed / saves

    for name in sites:
        sample(name)
    timings = interleave({name: functools.partial(sample, name) for name in sites}, rounds)
    watched, plain = median(timings["watched"]), median(timings["plain"])
    app, db, _ = sites["watched"]
    with app.app_context(), db.engine.connect() as connection:
        # In the site's transaction a save writes the inbox; a pass merges it into the queue later.
        models = app.extensions["indexnow"].models
        queued = sum(connection.execute(sa.select(sa.func.count()).select_from(table)).scalar() or 0
                     for table in (models.queue, models.inbox))
    assert queued, "the watched saves queued nothing"
    extra = watched - plain
    return Figure(number, f"one watched save (related=, fields=) vs unwatched ({backend_name(database_url)})",
                  ms(watched), ms(plain), watched / plain, "<= 1 ms more", extra <= 0.001,
                  f"watched save: {ms(extra)} more per save (the post, its tag page and the home page queued "
                  f"in the save's transaction); {rounds} interleaved rounds of {saves} saves (load, change, commit).")
