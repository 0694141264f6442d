"""The operator's controls: pause, resume (with or without catch-up), trigger; in the API and the CLI."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from click.testing import Result
from flask import Flask

from flask_indexnow import IndexNow
from flask_indexnow.scheduling import UnknownScheduleError, jobs

from ..conftest import FakeClock, rows
from .conftest import START

pytestmark = pytest.mark.every_backend  # compare-and-set flips and the unique occurrence key, on each database


def cli(app: Flask, *args: str) -> Result:
    return app.test_cli_runner().invoke(args=["indexnow", "schedule", *args])


def test_a_paused_schedule_dispatches_nothing(site: Flask, ext: IndexNow, clock: FakeClock) -> None:
    ext.schedule("h").every("1 hour").save()
    paused = ext.scheduler.pause("h")
    assert paused.changed and paused.schedule.paused and not paused.schedule.enabled
    assert ext.scheduler.pause("h").changed is False  # already paused
    clock.advance(hours=5)
    assert ext.scheduler.tick() == 0 and rows(site, "Job") == []
    listing = cli(site, "list").output.splitlines()[1].split()
    assert "paused" in listing


def test_resume_drops_what_was_missed(site: Flask, ext: IndexNow, clock: FakeClock) -> None:
    ext.schedule("h").every("1 hour").save()
    ext.scheduler.pause("h")
    clock.set(START + timedelta(hours=3, minutes=30))
    result = ext.scheduler.resume("h")
    assert result.changed and result.job_id is None
    assert result.schedule.next_run == START + timedelta(hours=4)  # the next one in the future
    assert ext.scheduler.tick() == 0 and rows(site, "Job") == []
    assert ext.scheduler.resume("h").changed is False  # not paused any more: nothing to do


def test_resume_with_catch_up_runs_once_for_what_was_missed(site: Flask, ext: IndexNow, clock: FakeClock) -> None:
    ext.schedule("h").every("1 hour").expires("5 minutes").save()
    ext.scheduler.pause("h")
    clock.set(START + timedelta(hours=3, minutes=30))
    result = ext.scheduler.resume("h", catch_up=True)
    assert result.changed and result.job_id is not None
    assert result.schedule.next_run == START + timedelta(hours=4)
    assert result.schedule.last_run == clock.now
    (job,) = rows(site, "Job")
    assert job.id == result.job_id and job.occurrence_key == "h@2024-05-01T13:00:00+00:00"
    assert job.expires_at == clock.now + timedelta(minutes=5)  # the operator asked for it now
    assert ext.scheduler.tick() == 0
    assert [o.outcome for o in ext.scheduler.history("h")] == ["dispatched"]


def test_resume_with_catch_up_when_nothing_was_missed(site: Flask, ext: IndexNow, clock: FakeClock) -> None:
    ext.schedule("h").every("1 hour").save()
    ext.scheduler.pause("h")
    clock.advance(minutes=10)
    result = ext.scheduler.resume("h", catch_up=True)
    assert result.changed and result.job_id is None and rows(site, "Job") == []


def test_trigger_runs_one_job_now_and_leaves_the_timing(site: Flask, ext: IndexNow, clock: FakeClock) -> None:
    ran: list[Any] = []
    ext.job("h")(ran.append)
    before = ext.schedule("h", {"n": 1}).every("1 hour").max_attempts(2).save()
    clock.advance(minutes=10)
    first = ext.scheduler.trigger("h")
    assert first.changed and first.job_id is not None
    assert (first.schedule.next_run, first.schedule.last_run) == (before.next_run, before.last_run)
    (job,) = rows(site, "Job")
    assert (job.payload, job.max_attempts, job.schedule) == ({"n": 1}, 2, "h")
    # A second click before the job started: the same job, not a second one.
    again = ext.scheduler.trigger("h")
    assert (again.changed, again.job_id) == (False, first.job_id)
    assert len(rows(site, "Job")) == 1
    jobs.run_due(site.extensions["indexnow"])
    assert ran == [{"n": 1}]
    third = ext.scheduler.trigger("h")  # once it ran, a new trigger is a new run
    assert third.changed and third.job_id != first.job_id
    history = ext.scheduler.history("h")
    assert [(o.outcome, o.result) for o in history] == [("triggered", "pending"), ("triggered", "completed")]
    assert history[1].due_at == START + timedelta(minutes=10)


def test_a_paused_schedule_can_still_be_triggered(site: Flask, ext: IndexNow) -> None:
    ext.schedule("h").every("1 hour").save()
    ext.scheduler.pause("h")
    assert ext.scheduler.trigger("h").changed
    assert ext.scheduler.list()[0].paused


@pytest.mark.parametrize("call", ["pause", "resume", "trigger", "history"])
def test_an_unknown_name_is_a_clear_error(site: Flask, ext: IndexNow, call: str) -> None:
    with pytest.raises(UnknownScheduleError, match="no schedule named 'nope'"):
        getattr(ext.scheduler, call)("nope")


@pytest.mark.parametrize("name", ["no\x00pe", "no\npe", "n" * 300])
def test_a_name_no_schedule_can_have_is_unknown_too(site: Flask, ext: IndexNow, name: str) -> None:
    """A NUL (which PostgreSQL refuses even in a comparison) or an overlong name: "no such schedule", no database error."""
    ext.schedule("h").every("1 hour").save()
    for call in ("pause", "resume", "trigger", "history"):
        with pytest.raises(UnknownScheduleError, match="no schedule named"):
            getattr(ext.scheduler, call)(name)
    assert ext.scheduler.get(name) is None and ext.scheduler.remove(name) is False
    assert ext.scheduler.remove("h") is True  # a real lookup beside them still works
    result = cli(site, "pause", name)
    assert result.exit_code == 1 and result.output.startswith("Error: no schedule named "), result.output
    assert "database" not in result.output.lower(), result.output


@pytest.mark.parametrize("args", [["pause", "nope"], ["resume", "nope"], ["resume", "nope", "--catch-up"],
                                  ["trigger", "nope"], ["history", "nope"], ["remove", "nope"]])
def test_the_cli_says_an_unknown_name_in_one_line(site: Flask, args: list[str]) -> None:
    result = cli(site, *args)
    assert result.exit_code == 1, result.output
    assert result.output == "Error: no schedule named 'nope' (see `flask indexnow schedule list`)\n"


def test_the_cli_controls(site: Flask, ext: IndexNow, clock: FakeClock) -> None:
    ext.schedule("h").every("1 hour").save()
    assert cli(site, "pause", "h").output == "Paused h\n"
    assert cli(site, "pause", "h").output == "h was already paused\n"
    clock.set(START + timedelta(hours=2, minutes=30))
    resumed = cli(site, "resume", "h", "--catch-up")
    assert resumed.exit_code == 0
    (job,) = rows(site, "Job")
    assert resumed.output == (f"Resumed h; job {job.id} dispatched for the missed run; "
                              "next run 2024-05-01 15:00:00 UTC\n")
    assert cli(site, "resume", "h").output == "h was not paused; next run 2024-05-01 15:00:00 UTC\n"
    triggered = cli(site, "trigger", "h")
    assert triggered.exit_code == 0 and triggered.output.startswith("Triggered h: job ")
    assert "was already triggered" in cli(site, "trigger", "h").output
    history = cli(site, "history", "h").output.splitlines()
    assert history[0].split() == ["DUE", "OUTCOME", "JOB", "RESULT", "DURATION", "ERROR"]
    assert [line.split()[3] for line in history[1:]] == ["triggered", "dispatched"]
