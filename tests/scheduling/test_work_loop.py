"""The long-running worker: loop, schedules once a minute, stops, errors, heartbeat, signals."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from flask import Flask

from flask_indexnow import IndexNow
from flask_indexnow.scheduling import Worker, jobs, scheduler_active

from ..conftest import FakeClock, rows
from .conftest import START

pytestmark = pytest.mark.every_backend  # lost connections differ by database

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def site(make_app, ext: IndexNow, clock: FakeClock, endpoint) -> Flask:
    clock.set(START)
    app: Flask = make_app(indexnow=ext, INDEXNOW_SCHEDULER_ENABLED=False)
    with app.app_context():
        yield app


def test_one_loop_delivers_urls_and_runs_jobs_but_once_skips_schedules(site: Flask, ext: IndexNow, endpoint,
                                                                       clock: FakeClock) -> None:
    ran: list[Any] = []
    ext.job("h")(ran.append)
    ext.schedule("h", "scheduled").every("1 minute").save()
    ext.enqueue("https://example.com/page")
    jobs.dispatch(site.extensions["indexnow"], "h", "direct")
    clock.advance(minutes=5)
    result = Worker(site.extensions["indexnow"]).run_once()  # what `work --once` does
    assert result.urls is not None and result.urls.succeeded == 1
    assert result.jobs is not None and result.jobs.completed == 1
    assert result.dispatched is None
    assert ran == ["direct"]
    assert endpoint.urls_received() == ["https://example.com/page"]
    assert rows(site, "Schedule")[0].last_run is None


def test_schedules_are_evaluated_at_start_then_about_once_a_minute(site: Flask, ext: IndexNow,
                                                                  clock: FakeClock) -> None:
    ran: list[Any] = []
    ext.job("h")(ran.append)
    ext.schedule("h", "tick").every("1 minute").save()
    clock.advance(seconds=61)
    worker = Worker(site.extensions["indexnow"], sleep=0)
    worker.run(max_loops=1)
    assert ran == ["tick"]  # dispatched and run in the same loop
    clock.advance(seconds=30)
    worker.run(max_loops=2)
    assert ran == ["tick"]  # 30 s later: not evaluated again, although the schedule is due
    clock.advance(seconds=30)
    worker.run(max_loops=3)
    assert ran == ["tick", "tick"]
    assert worker.loops == 3


def test_a_stop_request_finishes_the_current_job_and_leaves_the_rest(site: Flask, ext: IndexNow) -> None:
    worker = Worker(site.extensions["indexnow"], sleep=0)
    ran: list[Any] = []

    @ext.job("h")
    def handler(payload: Any) -> None:
        ran.append(payload)
        worker.stop()  # as the SIGTERM handler does

    for n in range(3):
        jobs.dispatch(site.extensions["indexnow"], "h", n)
    worker.run()
    assert ran == [0]
    assert [j.status for j in rows(site, "Job")] == ["completed", "pending", "pending"]


def test_a_bad_job_never_stops_the_loop(site: Flask, ext: IndexNow) -> None:
    ext.job("bad")(lambda payload: 1 / 0)
    ext.job("good")(lambda payload: None)
    state = site.extensions["indexnow"]
    jobs.dispatch(state, "bad")
    jobs.dispatch(state, "good")
    worker = Worker(state, sleep=0)
    worker.run(max_loops=2)
    assert worker.loops == 2
    by_handler = {j.handler: j for j in rows(site, "Job")}
    assert by_handler["good"].status == "completed"
    assert "ZeroDivisionError" in by_handler["bad"].last_error


def test_the_session_is_removed_after_each_loop(site: Flask, ext: IndexNow) -> None:
    state = site.extensions["indexnow"]
    sessions: list[Any] = []
    ext.job("h")(lambda payload: sessions.append(state.db.session()))
    worker = Worker(state, sleep=0)
    for _ in range(2):
        jobs.dispatch(state, "h")
        worker.run_once()
    assert len(sessions) == 2 and sessions[0] is not sessions[1]


def test_heartbeat_makes_the_scheduler_active(site: Flask, ext: IndexNow, clock: FakeClock) -> None:
    state = site.extensions["indexnow"]
    assert scheduler_active(state) is False
    Worker(state, sleep=0).run(max_loops=1)
    assert scheduler_active(state) is True
    clock.advance(minutes=10)
    assert scheduler_active(state) is False


def test_another_process_sees_the_scheduler_through_the_database(make_app, ext: IndexNow, clock: FakeClock,
                                                                 endpoint) -> None:
    """With a per-process cache (SimpleCache), a recent schedule run proves a worker is alive."""
    clock.set(START)
    worker_app: Flask = make_app(indexnow=ext)
    web_app: Flask = make_app(indexnow=IndexNow(), create_tables=False)
    with web_app.app_context():
        assert scheduler_active(web_app.extensions["indexnow"]) is False
    with worker_app.app_context():
        ext.schedule("h").every("1 minute").save()
        ext.job("h")(lambda payload: None)
        clock.advance(minutes=1)
        Worker(worker_app.extensions["indexnow"], sleep=0).run(max_loops=1)
    with web_app.app_context():
        assert scheduler_active(web_app.extensions["indexnow"]) is True
        data = web_app.extensions["indexnow"]
        from flask_indexnow.stats import collect_status

        checks = {c["name"]: c for c in collect_status(data, scheduler_active=scheduler_active(data))["checks"]}
        assert checks["scheduler"]["ok"] is True


@pytest.mark.parametrize("backend", ["postgresql", "mariadb"])
def test_a_lost_database_connection_is_survived(make_app, ext: IndexNow, clock: FakeClock, endpoint,
                                                caplog: pytest.LogCaptureFixture) -> None:
    clock.set(START)
    # No pre-ping, so the loop itself meets the dead connection.
    app: Flask = make_app(indexnow=ext, SQLALCHEMY_ENGINE_OPTIONS={}, INDEXNOW_SCHEDULER_ENABLED=False)
    backend_ids: list[int] = []
    with app.app_context():
        state = app.extensions["indexnow"]
        engine = state.engine()
        ask = "SELECT pg_backend_pid()" if engine.dialect.name == "postgresql" else "SELECT CONNECTION_ID()"

        @sa.event.listens_for(engine, "connect")
        def remember(dbapi_connection: Any, record: Any) -> None:
            cursor = dbapi_connection.cursor()
            cursor.execute(ask)
            backend_ids.append(int(cursor.fetchone()[0]))
            cursor.close()

        engine.dispose()  # every connection from now on is known
        ext.job("h")(lambda payload: None)
        jobs.dispatch(state, "h")
        ext.enqueue("https://example.com/later", available_at=START + timedelta(minutes=1))
        worker = Worker(state, sleep=0)
        assert worker.run_once().jobs.completed == 1  # type: ignore[union-attr]
        assert backend_ids

        killer = sa.create_engine(app.config["SQLALCHEMY_DATABASE_URI"])
        kill = "SELECT pg_terminate_backend({})" if engine.dialect.name == "postgresql" else "KILL {}"
        with killer.begin() as connection:
            for backend_id in backend_ids:
                connection.execute(sa.text(kill.format(int(backend_id))))
        killer.dispose()

        clock.advance(minutes=1)
        with caplog.at_level(logging.ERROR, "flask_indexnow"):
            worker.run(max_loops=3)  # the first loop hits a dead connection, the next one recovers
        assert "database error, reconnecting" in caplog.text
        assert worker.loops == 3
    assert rows(app, "Queue") == []
    assert endpoint.urls_received() == ["https://example.com/later"]


def read_until(path: Path, deadline: float) -> bool:
    while time.monotonic() < deadline:
        if path.exists():
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_real_worker_stops_cleanly_on_a_signal(make_app, tmp_path: Path, signum: int) -> None:
    app: Flask = make_app()
    state = app.extensions["indexnow"]
    with app.app_context():
        jobs.dispatch(state, "slow", "a")
        jobs.dispatch(state, "slow", "b")
    env = {
        **os.environ,
        "PYTHONUNBUFFERED": "1",
        "INDEXNOW_TEST_DB_URL": app.config["SQLALCHEMY_DATABASE_URI"],
        "INDEXNOW_TEST_PREFIX": app.config["INDEXNOW_TABLE_PREFIX"],
        "INDEXNOW_TEST_MARKS": str(tmp_path),
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "flask", "--app", "tests.scheduling.worker_app:create_app", "indexnow", "work",
         "--sleep", "0.2"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert read_until(tmp_path / "started-a", time.monotonic() + 60), "the worker never started the job"
        process.send_signal(signum)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, err
    assert "Traceback" not in err
    assert "IndexNow worker stopped" in out
    assert (tmp_path / "finished-a").exists()  # the job under way was finished
    assert not (tmp_path / "started-b").exists()  # and nothing new was started
    statuses = {j.payload: j.status for j in rows(app, "Job")}
    assert statuses == {"a": "completed", "b": "pending"}
