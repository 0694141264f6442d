"""Per-schedule job options: max_attempts(n) and expires(interval) (a new job status, ``expired``)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from flask import Flask

from flask_indexnow import IndexNow
from flask_indexnow.scheduling import jobs
from flask_indexnow.stats import job_counts

from ..conftest import FakeClock, rows
from .conftest import START

pytestmark = pytest.mark.every_backend  # the claim's expiry condition and the sweep run on each database


def test_max_attempts_goes_to_the_jobs(site: Flask, ext: IndexNow, clock: FakeClock) -> None:
    calls: list[Any] = []

    @ext.job("flaky")
    def flaky(payload: Any) -> None:
        calls.append(payload)
        raise RuntimeError("down")

    ext.schedule("flaky").every("1 hour").max_attempts(1).save()
    ext.schedule("flaky", name="patient").every("1 hour").save()
    clock.advance(hours=1)
    assert ext.scheduler.tick() == 2
    by_schedule = {j.schedule: j for j in rows(site, "Job")}
    assert by_schedule["flaky"].max_attempts == 1
    assert by_schedule["patient"].max_attempts == site.extensions["indexnow"].settings.job_max_attempts
    jobs.run_due(site.extensions["indexnow"])
    by_schedule = {j.schedule: j for j in rows(site, "Job")}
    assert by_schedule["flaky"].status == "failed"  # one try only
    assert by_schedule["patient"].status == "pending"  # retried later


@pytest.mark.parametrize("bad", [0, 1001, True, "3"])
def test_a_bad_max_attempts_is_refused(site: Flask, ext: IndexNow, bad: object) -> None:
    with pytest.raises(ValueError, match="max_attempts"):
        ext.schedule("h").every("1 hour").max_attempts(bad)  # type: ignore[arg-type]


def test_a_job_not_started_in_time_expires_without_running(site: Flask, ext: IndexNow, clock: FakeClock) -> None:
    ran: list[Any] = []
    ext.job("report")(ran.append)
    ext.schedule("report").every("1 hour").expires("5 minutes").save()
    clock.advance(hours=1, seconds=30)
    assert ext.scheduler.tick() == 1
    (job,) = rows(site, "Job")
    assert job.expires_at == START + timedelta(hours=1, minutes=5)  # counted from when it was due
    clock.advance(minutes=5)  # 13:05:30: no worker took it
    result = jobs.run_due(site.extensions["indexnow"])
    assert ran == [] and result.expired == 1 and result.ran == 0
    assert "1 expired unrun" in str(result)
    (job,) = rows(site, "Job")
    assert job.status == "expired" and job.attempts == 0 and "expired" in (job.last_error or "")
    (occurrence,) = ext.scheduler.history("report")
    assert (occurrence.outcome, occurrence.result) == ("expired", "expired")
    with site.extensions["indexnow"].engine().connect() as connection:
        assert job_counts(site.extensions["indexnow"], connection)["expired"] == 1


def test_a_job_started_in_time_runs_and_a_retry_is_not_expired(site: Flask, ext: IndexNow,
                                                               clock: FakeClock) -> None:
    attempts: list[Any] = []

    @ext.job("report")
    def report(payload: Any) -> None:
        attempts.append(payload)
        if len(attempts) == 1:
            raise RuntimeError("first try fails")

    ext.schedule("report").every("1 hour").expires("5 minutes").save()
    clock.advance(hours=1)
    ext.scheduler.tick()
    state = site.extensions["indexnow"]
    assert jobs.run_due(state).retried == 1  # started in time, then failed
    clock.advance(hours=1)  # its retry is due long after the expiry: it was started, so it runs
    ext.scheduler.tick()  # the 14:00 occurrence's own job, due now, runs too
    result = jobs.run_due(state)
    assert result.expired == 0 and len(attempts) == 3
    assert {j.status for j in rows(site, "Job")} == {"completed"}


def test_the_claim_never_takes_an_expired_job(site: Flask, ext: IndexNow, clock: FakeClock) -> None:
    """Even before the sweep has marked it: the claim's own condition refuses it."""
    state = site.extensions["indexnow"]
    jobs.dispatch(state, "report", expires_at=START + timedelta(minutes=1))
    clock.advance(minutes=2)
    assert jobs.claim(state) is None
    assert [j.status for j in rows(site, "Job")] == ["pending"]
    assert jobs.expire_due(state) == 1
    assert [j.status for j in rows(site, "Job")] == ["expired"]


def test_cron_aliases_schedule(site: Flask, ext: IndexNow, clock: FakeClock) -> None:
    saved = ext.schedule("h").cron("@hourly").save()
    assert saved.describe == "cron @hourly" and saved.next_run == START + timedelta(hours=1)
    daily = ext.schedule("h", name="daily").cron("@daily", timezone="Europe/Rome").save()
    assert daily.next_run.isoformat() == "2024-05-01T22:00:00+00:00"  # midnight in Rome (UTC+2)
