"""A PostgreSQL restart under a running ``flask indexnow work``: the worker reconnects
on its own and no URL is lost.

The restart is real (``pg_ctlcluster … restart``), so it needs the local cluster
and root; it breaks every open connection on the server, including those of
other test runs, so it is done once and kept short. PostgreSQL is started
again in ``finally`` whatever happens.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import pytest
import sqlalchemy as sa

from ..conftest import POSTGRES_URL, unavailable
from .conftest import count, ext, history_by_url
from .servers import WorkerProcess, shared_config, wait_until

HOSTS = 10


def cluster() -> list[str]:
    """``pg_ctlcluster`` arguments naming the local cluster, or the reason it cannot be restarted."""
    if sa.engine.make_url(POSTGRES_URL).host not in ("127.0.0.1", "localhost", None):
        unavailable("the local PostgreSQL cluster", "INDEXNOW_TEST_POSTGRES_URL names another machine")
    if shutil.which("pg_ctlcluster") is None or not os.path.isdir("/etc/postgresql") or os.geteuid() != 0:
        unavailable("the local PostgreSQL cluster", "restarting it needs pg_ctlcluster and root")
    return ["--skip-systemctl-redirect", sorted(os.listdir("/etc/postgresql"))[0], "main"]


def pg_ctlcluster(*args: str, check: bool = True) -> int:
    return subprocess.run(["pg_ctlcluster", *args], check=check, timeout=120,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["postgresql"])
def test_the_worker_reconnects_after_a_database_restart_and_loses_nothing(make_app, counting_endpoint, tmp_path):
    name = cluster()
    counting_endpoint.default.delay = 0.02  # the worker is in the middle of its passes when the server goes
    app = make_app(INDEXNOW_ENDPOINT=counting_endpoint.url, INDEXNOW_BATCH_SIZE=40, INDEXNOW_STALE_AFTER=3,
                   INDEXNOW_TIMEOUT=2)  # a POST must end before its claim is stale
    before = [f"https://site{n % HOSTS}.example.com/before/{n}" for n in range(1000)]
    after = [f"https://site{n % HOSTS}.example.com/after/{n}" for n in range(200)]
    with app.app_context():
        ext(app).enqueue_many(before)
    # No pool_pre_ping in the worker: it has to notice the dead connections by itself.
    worker = WorkerProcess(shared_config(app, SQLALCHEMY_ENGINE_OPTIONS={}), tmp_path / "worker.log")
    try:
        wait_until(lambda: counting_endpoint.total() >= 200, 120, "the worker to be under way")
        try:
            pg_ctlcluster("restart", *name)
        finally:
            if pg_ctlcluster("status", *name, check=False) != 0:
                pg_ctlcluster("start", *name)
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
