"""The scheduler tick: overlap policies, no drift, downtime, occurrence keys."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
import sqlalchemy as sa
from flask import Flask

from flask_indexnow import IndexNow, OverlapPolicy
from flask_indexnow.scheduling import jobs

from ..conftest import FakeClock, rows
from .conftest import START, UTC

pytestmark = pytest.mark.every_backend  # unique occurrence keys and datetimes differ by database


def schedule_row(app: Flask, handler: str = "sync") -> sa.Row:
    return rows(app, "Schedule", handler=handler)[0]


def set_job_status(app: Flask, status: str) -> None:
    table = app.extensions["indexnow"].models.Job.__table__
    with app.extensions["indexnow"].engine().begin() as connection:
        connection.execute(table.update().values(status=status))


def test_nothing_is_dispatched_before_the_due_time(site: Flask, ext: IndexNow, clock: FakeClock) -> None:
    ext.schedule("sync").every("5 minutes").save()
    clock.advance(minutes=4, seconds=59)
    assert ext.scheduler.tick() == 0
    clock.advance(seconds=1)
    assert ext.scheduler.tick() == 1
    assert ext.scheduler.tick() == 0


def test_a_dispatched_job_carries_the_schedule(site: Flask, ext: IndexNow, clock: FakeClock) -> None:
    ext.schedule("report", {"type": "summary"}).every("1 hour").on_queue("reports").save()
    clock.advance(hours=1)
    assert ext.scheduler.tick() == 1
    (job,) = rows(site, "Job")
    assert (job.handler, job.queue, job.payload, job.status, job.attempts) == (
        "report", "reports", {"type": "summary"}, "pending", 0)
    assert job.max_attempts == site.config["INDEXNOW_JOB_MAX_ATTEMPTS"]
    assert job.occurrence_key == "report@2024-05-01T13:00:00+00:00"
    assert schedule_row(site, "report").last_run == START + timedelta(hours=1)


def test_allow_dispatches_while_a_job_is_pending(site: Flask, ext: IndexNow, clock: FakeClock) -> None:
    ext.schedule("sync").every("5 minutes").save()
    for _ in range(3):
        clock.advance(minutes=5)
        assert ext.scheduler.tick() == 1
    assert [j.status for j in rows(site, "Job")] == ["pending"] * 3


@pytest.mark.parametrize("busy", ["pending", "processing"])
def test_skip_dispatches_nothing_but_advances_and_sets_last_run(
    site: Flask, ext: IndexNow, clock: FakeClock, busy: str
) -> None:
    ext.schedule("sync").every("5 minutes").overlap(OverlapPolicy.SKIP).save()
    clock.advance(minutes=5)
    assert ext.scheduler.tick() == 1
    set_job_status(site, busy)
    clock.advance(minutes=5, seconds=30)
    assert ext.scheduler.tick() == 0
    row = schedule_row(site)
    assert len(rows(site, "Job")) == 1
    assert row.next_run == START + timedelta(minutes=15)
    assert row.last_run == clock.now  # the skipped tick counts as the last run
    set_job_status(site, "completed")
    clock.set(START + timedelta(minutes=15))
    assert ext.scheduler.tick() == 1


def test_buffer_is_like_skip_but_leaves_last_run(site: Flask, ext: IndexNow, clock: FakeClock) -> None:
    ext.schedule("sync").every("5 minutes").overlap(OverlapPolicy.BUFFER).save()
    clock.advance(minutes=5)
    assert ext.scheduler.tick() == 1
    dispatched_at = clock.now
    clock.advance(minutes=5)
    assert ext.scheduler.tick() == 0
    row = schedule_row(site)
    assert row.next_run == START + timedelta(minutes=15)
    assert row.last_run == dispatched_at
    set_job_status(site, "failed")  # only pending/processing jobs block
    clock.advance(minutes=5)
    assert ext.scheduler.tick() == 1
    assert schedule_row(site).last_run == clock.now


def test_a_late_tick_does_not_drift(site: Flask, ext: IndexNow, clock: FakeClock) -> None:
    ext.schedule("sync").every("1 hour").save()
    clock.advance(hours=1, seconds=47)  # evaluated 47 s late
    assert ext.scheduler.tick() == 1
    assert schedule_row(site).next_run == START + timedelta(hours=2)


def test_after_downtime_one_run_then_the_next_future_occurrence(site: Flask, ext: IndexNow, clock: FakeClock) -> None:
    ext.schedule("sync").every("1 hour").save()
    ext.schedule("nightly").cron("0 3 * * *").save()
    clock.advance(days=3, minutes=25)  # seventy-odd hourly and three nightly occurrences missed
    assert ext.scheduler.tick() == 2
    assert ext.scheduler.tick() == 0
    assert schedule_row(site, "sync").next_run == START + timedelta(days=3, hours=1)
    assert schedule_row(site, "nightly").next_run == datetime(2024, 5, 5, 3, tzinfo=UTC)
    assert len(rows(site, "Job")) == 2


def test_one_broken_schedule_does_not_stop_the_others(site: Flask, ext: IndexNow, clock: FakeClock, caplog) -> None:
    ext.schedule("broken").every("1 hour").save()
    ext.schedule("fine").every("1 hour").save()
    state = site.extensions["indexnow"]
    table = state.models.Schedule.__table__
    with state.engine().begin() as connection:  # as if edited by hand into nonsense
        connection.execute(table.update().where(table.c.handler == "broken").values(expression="now and then"))
    clock.advance(hours=1)
    assert ext.scheduler.tick() == 1
    assert [j.handler for j in rows(site, "Job")] == ["fine"]
    assert "'broken' could not be evaluated" in caplog.text


def test_an_occurrence_already_dispatched_is_not_dispatched_again(site: Flask, ext: IndexNow, clock: FakeClock) -> None:
    ext.schedule("sync").every("1 hour").save()
    state = site.extensions["indexnow"]
    jobs.dispatch(state, "sync", occurrence_key="sync@2024-05-01T13:00:00+00:00")
    clock.advance(hours=1)
    assert ext.scheduler.tick() == 0
    assert len(rows(site, "Job")) == 1
    assert schedule_row(site).next_run == START + timedelta(hours=2)


def test_the_occurrence_key_is_unique_in_the_database(site: Flask) -> None:
    state = site.extensions["indexnow"]
    jobs.dispatch(state, "sync", occurrence_key="sync@x")
    with pytest.raises(sa.exc.IntegrityError):
        jobs.dispatch(state, "sync", occurrence_key="sync@x")
    assert len(rows(site, "Job")) == 1
