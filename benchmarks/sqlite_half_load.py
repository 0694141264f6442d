"""Where figure 14's SQLite p95 at half load comes from: delivery, or the saves' own events.

    python -m benchmarks.sqlite_half_load [ROUNDS] [REQUESTS]   # default 8 rounds of 1,000

The figure-14 blog on SQLite (a file per variant in a temporary directory),
gunicorn with 4 sync workers, a 50 ms local endpoint, four variants side by
side: without the extension; with it as released (the tick thread); with it
but no tick, a ``flask indexnow work --sleep 2`` process delivering instead;
with it and no pass at all (``INDEXNOW_QUEUE_ENABLED = False``, nothing
delivered). Two flat-out rounds of ``2 × REQUESTS`` set the pace, then
``ROUNDS`` interleaved rounds of ``REQUESTS`` at half that rate, each followed
by 3 untimed seconds. Prints each variant's median and p95 and their ratios to
the plain blog (docs/performance.md, "An editing site under sync workers").
"""

from __future__ import annotations

import functools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from . import blog_server, editing
from .endpoint import Endpoint
from .harness import interleave, median
from .site import new_prefix

#: name → (blog variant, INDEXNOW_* settings, delivered by a worker process of its own).
VARIANTS: dict[str, tuple[str, dict[str, Any], bool]] = {
    "plain": ("plain", {}, False),
    "tick thread": ("ext", {}, False),
    "worker process": ("ext", {"INDEXNOW_QUEUE_ENABLED": False}, True),
    "no pass": ("ext", {"INDEXNOW_QUEUE_ENABLED": False}, False),
}


def _worker(config: dict[str, Any], log: Path) -> subprocess.Popen[bytes]:
    """``flask indexnow work`` for one variant's blog (its tick switched back on: it is the worker)."""
    env = dict(os.environ, **{blog_server.CONFIG_ENV: json.dumps(dict(config, settings={}))})
    with log.open("wb") as out:
        return subprocess.Popen([sys.executable, "-m", "flask", "--app", "benchmarks.blog_server:create_app()",
                                 "indexnow", "work", "--sleep", "2"], env=env, stdout=out, stderr=subprocess.STDOUT)


def run(rounds: int, requests_per_round: int) -> dict[str, list[list[float]]]:
    """Each variant's request latencies, one list per paced round."""
    with tempfile.TemporaryDirectory() as work, Endpoint(delay=0.05) as endpoint:
        servers: dict[str, editing.Gunicorn] = {}
        workers: list[subprocess.Popen[bytes]] = []
        try:
            for number, (name, (variant, settings, own_worker)) in enumerate(VARIANTS.items()):
                config = {"database_url": f"sqlite:///{work}/blog{number}.db", "prefix": new_prefix(),
                          "endpoint_url": endpoint.url, "variant": variant, "settings": settings,
                          "tick_mode": "thread" if variant == "ext" else "auto"}
                app, db, post = blog_server.build(config)
                blog_server.seed(app, db, post)  # the files go with the directory: nothing to drop
                servers[name] = editing.Gunicorn(config)
                if own_worker:
                    workers.append(_worker(config, Path(work) / f"worker{number}.log"))
            for server in servers.values():  # warm up every worker
                editing._workload(server.base, editing.CLIENTS * 10, [])
            busy = interleave({name: functools.partial(editing._workload, server.base, 2 * requests_per_round, [])
                               for name, server in servers.items()}, 2)
            rate = editing.HALF_LOAD * 2 * requests_per_round / median(busy["plain"])
            paced: dict[str, list[list[float]]] = {name: [] for name in servers}

            def paced_round(name: str) -> float:
                latencies: list[float] = []
                editing._workload(servers[name].base, requests_per_round, latencies, rate)
                paced[name].append(latencies)
                time.sleep(editing.SETTLE)
                return 0.0

            interleave({name: functools.partial(paced_round, name) for name in servers}, rounds)
        finally:
            for server in servers.values():
                server.stop()
            for worker in workers:
                worker.terminate()
                worker.wait(30)
        print(f"{rate:.0f} requests/s on a timetable; the endpoint saw {endpoint.stats()['urls']} URLs")
    return paced


def report(paced: dict[str, list[list[float]]]) -> None:
    pooled = {name: [value for latencies in rounds for value in latencies] for name, rounds in paced.items()}
    base_median, base_p95 = statistics.median(pooled["plain"]), editing._p95(pooled["plain"])
    for name, values in pooled.items():
        per_round = statistics.median(statistics.median(ours) / statistics.median(plain)
                                      for ours, plain in zip(paced[name], paced["plain"]))
        print(f"{name:15} median {statistics.median(values) * 1000:6.2f} ms ({statistics.median(values) / base_median:.3f})"
              f"  p95 {editing._p95(values) * 1000:6.2f} ms ({editing._p95(values) / base_p95:.3f})"
              f"  per-round median ratio {per_round:.3f}")


if __name__ == "__main__":
    arguments = [int(value) for value in sys.argv[1:3]]
    report(run(*arguments) if arguments else run(8, 1000))
