"""Operators acting at the same moment from several processes: one trigger, one catch-up run.

Real processes (see test_concurrency.py) released together from a barrier.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from flask import Flask

from flask_indexnow import IndexNow

from ..conftest import FakeClock, rows
from . import concurrent
from .test_concurrency import PROCESSES, race

pytestmark = pytest.mark.every_backend  # row locks, compare-and-set and unique keys differ by database


def test_simultaneous_triggers_make_one_job(make_app, tmp_path: Path) -> None:
    ext = IndexNow()
    app: Flask = make_app(indexnow=ext)
    with app.app_context():
        ext.schedule("record", "triggered", name="report").every("1 day").save()
        before = ext.scheduler.list()[0]
    args = (app.config["SQLALCHEMY_DATABASE_URI"], app.config["INDEXNOW_TABLE_PREFIX"], str(tmp_path))
    reported = race(concurrent.control_at_once, args, ("trigger", "report"))
    assert len(reported) == PROCESSES
    (job,) = rows(app, "Job")
    assert sum(changed for changed, _ in reported) == 1  # one made it, the others were told about it
    assert {job_id for _, job_id in reported} == {job.id}
    assert [r.outcome for r in rows(app, "ScheduleRun")] == ["triggered"]
    with app.app_context():
        after = ext.scheduler.list()[0]
    assert (after.next_run, after.last_run) == (before.next_run, before.last_run)


def test_simultaneous_catch_up_resumes_make_one_run(make_app, clock: FakeClock, tmp_path: Path) -> None:
    ext = IndexNow()
    app: Flask = make_app(indexnow=ext)
    real_now = clock.now
    clock.set(real_now - timedelta(hours=3))  # saved three hours ago: two runs missed by now
    with app.app_context():
        ext.schedule("record", "caught up", name="report").every("1 hour").save()
        ext.scheduler.pause("report")
    clock.set(real_now)
    args = (app.config["SQLALCHEMY_DATABASE_URI"], app.config["INDEXNOW_TABLE_PREFIX"], str(tmp_path))
    reported = race(concurrent.control_at_once, args, ("resume_catch_up", "report"))
    (job,) = rows(app, "Job")
    assert [changed for changed, _ in reported].count(True) == 1
    assert [job_id for _, job_id in reported if job_id is not None] == [job.id]
    assert [r.outcome for r in rows(app, "ScheduleRun")] == ["dispatched"]
    (schedule,) = rows(app, "Schedule")
    assert schedule.enabled and schedule.next_run > real_now - timedelta(minutes=1)
