"""Several worker processes on one database: each occurrence dispatched once, each job run once.

Real processes (multiprocessing, from a fork server) race on the real PostgreSQL, MariaDB
and SQLite databases, released together from a barrier at every step.
"""

from __future__ import annotations

import multiprocessing
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from flask_indexnow import IndexNow
from flask_indexnow.scheduling import jobs

from ..conftest import FakeClock, rows
from ..paused import paused_after
from . import concurrent

pytestmark = pytest.mark.every_backend  # job claims and row locks differ by database

PROCESSES = 4
STEPS = 12
#: The longest a whole race may take before the test fails (not a timing assertion: a bound).
TIMEOUT = 180


def start_method() -> Any:
    """Fresh processes, started cheaply: a fork server that has imported the children's module once.

    Each child is still a process of its own, with no state of the test's (the
    server forks from a clean interpreter); "spawn" made every child import
    Flask, SQLAlchemy and the drivers again, about a second each. Where there
    is no fork server (Windows), "spawn".
    """
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([concurrent.__name__])
    return context


def race(target: Any, before: tuple[Any, ...], after: tuple[Any, ...] = ()) -> list[Any]:
    """Run ``target(*before, barrier, *after, results)`` in PROCESSES processes; return what each reported."""
    context = start_method()
    barrier = context.Barrier(PROCESSES)
    results = context.Queue()
    processes = [context.Process(target=target, args=(*before, barrier, *after, results)) for _ in range(PROCESSES)]
    for process in processes:
        process.start()
    try:
        reported = [results.get(timeout=TIMEOUT) for _ in processes]
        for report in reported:
            assert not isinstance(report, str), report
        for process in processes:
            process.join(timeout=TIMEOUT)
            assert process.exitcode == 0
    finally:
        for process in processes:
            if process.is_alive():
                process.kill()
                process.join()
    return reported


def test_each_occurrence_is_dispatched_exactly_once(make_app, clock: FakeClock, tmp_path: Path) -> None:
    start = datetime(2024, 5, 1, 12, 0, 0, tzinfo=timezone.utc)
    clock.set(start)
    ext = IndexNow()
    app: Flask = make_app(indexnow=ext)
    with app.app_context():
        ext.schedule("every_minute").every("1 minute").save()
        ext.schedule("cron_minute").cron("* * * * *").save()
        ext.schedule("skipping").every("1 minute").overlap("skip").save()
    args = (app.config["SQLALCHEMY_DATABASE_URI"], app.config["INDEXNOW_TABLE_PREFIX"], str(tmp_path))
    dispatched = race(concurrent.tick_in_step, args, (start, STEPS))
    # Two schedules dispatch at every step; the SKIP one only at the first (its job stays pending).
    assert sum(dispatched) == 2 * STEPS + 1
    found = rows(app, "Job")
    assert len(found) == 2 * STEPS + 1
    assert Counter(j.handler for j in found) == {"every_minute": STEPS, "cron_minute": STEPS, "skipping": 1}
    assert len({j.occurrence_key for j in found}) == len(found)


def test_each_job_runs_exactly_once(make_app, tmp_path: Path) -> None:
    app: Flask = make_app()
    count = 60
    with app.app_context():
        for n in range(count):
            jobs.dispatch(app.extensions["indexnow"], "record", n)
    args = (app.config["SQLALCHEMY_DATABASE_URI"], app.config["INDEXNOW_TABLE_PREFIX"], str(tmp_path))
    completed = race(concurrent.run_jobs, args)
    assert sum(completed) == count
    lines = (tmp_path / "ran.txt").read_text().splitlines()
    runs = Counter(int(line.split()[0]) for line in lines)
    assert runs == Counter(range(count))  # every job once, none twice
    assert len({line.split()[1] for line in lines}) >= 2  # the processes really shared the work
    assert {j.status for j in rows(app, "Job")} == {"completed"}
    assert {j.attempts for j in rows(app, "Job")} == {1}


@pytest.mark.parametrize("backend", ["postgresql", "mariadb"])
def test_an_open_claim_hides_only_its_own_job(make_app) -> None:
    """While one worker's claim transaction is open, another worker claims the next job.

    The claim must walk an index in its ORDER BY: a sorted scan would make
    MySQL/MariaDB lock every due job, and the other workers' SKIP LOCKED
    claims would find nothing until the first one commits.
    """
    app: Flask = make_app()
    state = app.extensions["indexnow"]
    with app.app_context():
        for n in range(5):
            jobs.dispatch(state, "record", n)
        engine = state.engine()

    def claim() -> Any:
        with app.app_context():
            return jobs.claim(state)

    with paused_after(engine, "FOR UPDATE", claim) as held:
        second = claim()
    assert held[0] is not None and second is not None, "a claim found nothing while four jobs were free"
    assert second.id != held[0].id
