"""SPEC §10: a worker killed mid-batch has its batch resent after INDEXNOW_STALE_AFTER, and nothing else."""

from __future__ import annotations

import threading
from collections import Counter

import pytest

from ..conftest import rows
from .conftest import count, ext, history_by_url
from .servers import Answer, CountingEndpoint, WorkerProcess, shared_config, wait_until

STALE = 3
BATCH = 30


@pytest.mark.parametrize("backend", ["sqlite", "postgresql", "mariadb"])
def test_a_worker_killed_mid_batch_has_its_batch_resent_and_nothing_else(make_app, tmp_path):
    held = threading.Event()
    release = threading.Event()
    held_urls: list[str] = []

    def decide(host: str, urls: list[str]) -> Answer:
        if not held.is_set():  # the first POST hangs until the test has killed its worker
            held_urls.extend(urls)
            held.set()
            return Answer(200, hold=release, delay=120)
        return Answer(200)

    endpoint = CountingEndpoint(decide).start()
    try:
        app = make_app(INDEXNOW_ENDPOINT=endpoint.url, INDEXNOW_BATCH_SIZE=BATCH, INDEXNOW_STALE_AFTER=STALE,
                       INDEXNOW_TIMEOUT=STALE - 1)  # a POST must end before its claim is stale
        urls = [f"https://site{n % 3}.example.com/page/{n}" for n in range(2 * BATCH)]
        with app.app_context():
            ext(app).enqueue_many(urls)
        config = shared_config(app)

        victim = WorkerProcess(config, tmp_path / "victim.log")
        try:
            wait_until(held.is_set, 60, "the victim's first POST")
            victims_batch = {row.url for row in rows(app, "Queue", status="processing")}
            victim.kill()  # SIGKILL: no clean-up of any kind
        finally:
            victim.kill()
            release.set()
        assert len(victims_batch) == BATCH
        assert set(held_urls) < victims_batch  # one host's POST was in flight, the others never sent

        survivor = WorkerProcess(config, tmp_path / "survivor.log")
        try:
            wait_until(lambda: count(app) == 0, 120, "the survivor to drain the queue")
        finally:
            assert survivor.stop() == 0, survivor.output()
    finally:
        endpoint.stop()

    # Only the URLs of the POST that was in flight went out twice; everything else once.
    assert endpoint.counts == Counter({url: 2 if url in held_urls else 1 for url in urls})
    history = history_by_url(app)
    assert sorted(history) == sorted(urls)
    assert all([row.status for row in entries] == ["success"] for entries in history.values())
    assert f"{BATCH} stale processing rows taken back to pending" in survivor.output()
