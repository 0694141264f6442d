"""Each schedule's memory: every occurrence's outcome with its job's result; shown, exported, pruned."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from flask import Flask

from flask_indexnow import IndexNow
from flask_indexnow.scheduling import jobs, last_outcomes, prune_history

from ..conftest import FakeClock, rows
from ..web.conftest import PREFIX, allow
from ..web.test_status_schema import validate
from .conftest import START

pytestmark = pytest.mark.every_backend  # the outer join to jobs and the newest-per-schedule query, on each database


def test_outcomes_with_the_job_result_newest_first(site: Flask, ext: IndexNow, clock: FakeClock) -> None:
    runs: list[Any] = []

    @ext.job("h")
    def handler(payload: Any) -> None:
        runs.append(payload)
        clock.advance(seconds=2)  # the job takes two seconds
        if len(runs) == 2:
            raise ValueError("the report server said no")

    ext.schedule("h").every("1 hour").overlap("skip").max_attempts(1).save()
    state = site.extensions["indexnow"]
    clock.advance(hours=1)
    ext.scheduler.tick()
    clock.advance(hours=1)
    ext.scheduler.tick()  # the 13:00 job has not run: skipped
    jobs.run_due(state)
    clock.advance(hours=1)
    ext.scheduler.tick()
    jobs.run_due(state)  # fails
    history = ext.scheduler.history("h")
    assert [(o.outcome, o.due_at.strftime("%H:%M"), o.result) for o in history] == [
        ("dispatched", "15:00", "failed"), ("skipped", "14:00", "-"), ("dispatched", "13:00", "completed")]
    assert history[2].duration == 2.0 and history[2].error is None
    assert history[0].duration == 2.0 and "the report server said no" in (history[0].error or "")
    assert history[0].job_id == max(j.id for j in rows(site, "Job"))
    assert [o.outcome for o in ext.scheduler.history("h", limit=1)] == ["dispatched"]
    assert last_outcomes(state) == {"h": "dispatched"} == ext.scheduler.last_outcomes()


def test_last_outcome_per_schedule(site: Flask, ext: IndexNow, clock: FakeClock) -> None:
    ext.schedule("a").every("1 hour").save()
    ext.schedule("b").every("1 hour").misfire_grace("1 minute").save()
    ext.schedule("c").every("1 hour").save()
    clock.advance(hours=1, minutes=30)
    ext.scheduler.tick()
    ext.scheduler.trigger("c")
    assert last_outcomes(site.extensions["indexnow"]) == {"a": "dispatched", "b": "missed", "c": "triggered"}


def test_history_is_pruned_with_the_url_history(site: Flask, ext: IndexNow, clock: FakeClock) -> None:
    ext.job("h")(lambda payload: None)
    ext.schedule("h").every("1 hour").save()
    clock.advance(hours=1)
    ext.scheduler.tick()
    jobs.run_due(site.extensions["indexnow"])
    clock.advance(days=10)
    ext.scheduler.tick()  # a recent one, kept
    result = prune_history(site.extensions["indexnow"], days=5)
    assert result.schedule_runs == 1 and result.jobs == 1
    assert "1 schedule occurrence(s)" in str(result)
    assert [o.recorded_at.date() for o in ext.scheduler.history("h")] == [(START + timedelta(days=10)).date()]


def test_status_json_and_page_show_each_schedule_with_its_last_outcome(make_app, ext: IndexNow,
                                                                        clock: FakeClock) -> None:
    clock.set(START)
    app = allow(make_app(indexnow=ext, INDEXNOW_SCHEDULER_ENABLED=False))
    with app.app_context():
        @ext.job("h")
        def handler(payload: Any) -> None:
            raise RuntimeError("disk full")

        ext.schedule("h").every("1 hour").max_attempts(1).save()
        ext.schedule("h", name="quiet").every("1 day").save()
        ext.scheduler.pause("quiet")
        clock.advance(hours=1)
        ext.scheduler.tick()
        jobs.run_due(app.extensions["indexnow"])
    document = app.test_client().get(PREFIX + "/status.json").get_json()
    validate(document)
    entries = {s["name"]: s for s in document["schedules"]}
    assert entries["quiet"]["paused"] is True and entries["quiet"]["last"] is None
    last = entries["h"]["last"]
    assert (last["outcome"], last["result"], last["due_at"]) == ("dispatched", "failed", "2024-05-01T13:00:00+00:00")
    assert "disk full" in last["error"]
    assert (entries["h"]["source"], entries["h"]["when"], entries["h"]["paused"]) == ("manual", "every 1 hour", False)
    page = app.test_client().get(PREFIX + "/").get_data(as_text=True)
    schedules = page[page.index('id="schedules"'):page.index('id="jobs"')]
    assert '<span class="badge b-dispatched">dispatched</span>' in schedules
    assert '<span class="badge b-failed">failed</span>' in schedules and "disk full" in schedules
    assert '<span class="badge b-paused">paused</span>' in schedules
