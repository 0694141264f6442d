"""A PostgreSQL restart under a running ``flask indexnow work``: the worker reconnects
on its own and no URL is lost.

The restart is real (``pg_ctl restart``: every connection is closed), on a
throw-away server this test starts with ``initdb`` in a temporary directory
(see :mod:`.private_postgres`). The shared server is never touched.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .conftest import count, ext, history_by_url
from .private_postgres import PrivatePostgres
from .servers import WorkerProcess, shared_config, wait_until

HOSTS = 10


@pytest.fixture
def private_postgres() -> Iterator[PrivatePostgres]:
    server = PrivatePostgres()
    try:
        yield server.start()
    finally:
        server.stop()


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["postgresql"])
def test_the_worker_reconnects_after_a_database_restart_and_loses_nothing(
    private_postgres, make_app, counting_endpoint, tmp_path
):
    counting_endpoint.default.delay = 0.02  # the worker is in the middle of its passes when the server goes
    app = make_app(SQLALCHEMY_DATABASE_URI=private_postgres.url, INDEXNOW_ENDPOINT=counting_endpoint.url,
                   INDEXNOW_BATCH_SIZE=40, INDEXNOW_STALE_AFTER=3,
                   INDEXNOW_TIMEOUT=2)  # a POST must end before its claim is stale
    before = [f"https://site{n % HOSTS}.example.com/before/{n}" for n in range(1000)]
    after = [f"https://site{n % HOSTS}.example.com/after/{n}" for n in range(200)]
    with app.app_context():
        ext(app).enqueue_many(before)
    # No pool_pre_ping in the worker: it has to notice the dead connections by itself.
    worker = WorkerProcess(shared_config(app, SQLALCHEMY_ENGINE_OPTIONS={}), tmp_path / "worker.log")
    try:
        wait_until(lambda: counting_endpoint.total() >= 200, 120, "the worker to be under way")
        private_postgres.restart()
        pid = worker.pid
        with app.app_context():
            ext(app).enqueue_many(after)
        wait_until(lambda: count(app) == 0 and set(counting_endpoint.counts) >= set(before + after), 180,
                   "the worker to deliver everything after the restart", interval=0.5)
        assert worker.alive() and worker.pid == pid  # the same process, never restarted
    finally:
        code = worker.stop()
    assert code == 0, worker.output()

    # Nothing lost: every URL delivered and recorded as a success exactly once. A batch
    # whose outcome could not be written while the server was down is sent again
    # after INDEXNOW_STALE_AFTER (SPEC §10), so a URL may reach the endpoint twice.
    assert set(counting_endpoint.counts) == set(before + after)
    assert max(counting_endpoint.counts.values()) <= 2
    history = history_by_url(app)
    assert sorted(history) == sorted(before + after)
    assert all([row.status for row in rows] == ["success"] for rows in history.values())
    assert count(app) == 0
    log = worker.output()
    assert "database error, reconnecting" in log or "could not refresh the next-due time" in log, log
