"""Schedules are unique by name (default: the handler), so one handler can have several."""

from __future__ import annotations

import pytest
from flask import Flask

from flask_indexnow import IndexNow
from flask_indexnow.scheduling import jobs

from ..conftest import FakeClock, rows

pytestmark = pytest.mark.every_backend  # the unique key moved from handler to name: each database enforces it


def test_one_handler_two_schedules(site: Flask, ext: IndexNow, clock: FakeClock) -> None:
    ext.schedule("report", {"type": "summary"}).every("1 hour").save()
    ext.schedule("report", {"type": "full"}, name="full-report").every("1 hour").on_queue("slow").save()
    assert [(s.name, s.handler, s.payload, s.queue) for s in ext.scheduler.list()] == [
        ("full-report", "report", {"type": "full"}, "slow"),
        ("report", "report", {"type": "summary"}, "default"),
    ]
    clock.advance(hours=1)
    assert ext.scheduler.tick() == 2
    found = sorted(rows(site, "Job"), key=lambda j: j.queue)
    assert [(j.handler, j.payload, j.queue, j.schedule) for j in found] == [
        ("report", {"type": "summary"}, "default", "report"),
        ("report", {"type": "full"}, "slow", "full-report"),
    ]
    # The default name keeps the occurrence key of earlier releases: handler@due-time.
    assert {j.occurrence_key for j in found} == {
        "report@2024-05-01T13:00:00+00:00", "full-report@2024-05-01T13:00:00+00:00"}


def test_save_upserts_by_name_and_remove_takes_the_name(site: Flask, ext: IndexNow, clock: FakeClock) -> None:
    first = ext.schedule("report", name="nightly").every("1 hour").save()
    clock.advance(minutes=10)
    again = ext.schedule("other_handler", {"n": 1}, name="nightly").every("60 minutes").save()
    assert (again.handler, again.payload) == ("other_handler", {"n": 1})
    assert again.next_run == first.next_run  # the same timing keeps its next run
    assert len(rows(site, "Schedule")) == 1
    ext.schedule("report").every("1 day").save()
    assert ext.scheduler.remove("nightly") is True
    assert [s.name for s in ext.scheduler.list()] == ["report"]
    assert ext.scheduler.remove("nightly") is False


def test_overlap_is_per_schedule(site: Flask, ext: IndexNow, clock: FakeClock) -> None:
    """A SKIP schedule waits for its own job, not for another schedule's job of the same handler."""
    ext.schedule("sync", name="a").every("1 minute").overlap("skip").save()
    ext.schedule("sync", name="b").every("1 minute").overlap("skip").save()
    clock.advance(minutes=1, seconds=1)
    assert ext.scheduler.tick() == 2  # b is not held back by a's pending job
    clock.advance(minutes=1)
    assert ext.scheduler.tick() == 0  # each now waits for its own
    assert [o.outcome for o in ext.scheduler.history("a")] == ["skipped", "dispatched"]
    job = jobs.claim(site.extensions["indexnow"])
    assert job is not None
    jobs.finish(site.extensions["indexnow"], job, None)
    clock.advance(minutes=1)
    assert ext.scheduler.tick() == 1  # the one whose job finished runs again


@pytest.mark.parametrize("name", ["", "   ", "x" * 192, 42])
def test_a_bad_name_is_refused_before_anything_is_written(site: Flask, ext: IndexNow, name: object) -> None:
    with pytest.raises(ValueError, match="schedule name"):
        ext.schedule("report", name=name).every("1 hour").save()  # type: ignore[arg-type]
    assert rows(site, "Schedule") == []


def test_cli_add_with_a_name(site: Flask, ext: IndexNow) -> None:
    runner = site.test_cli_runner()
    result = runner.invoke(args=["indexnow", "schedule", "add", "report", "--name", "weekly-report",
                                 "--cron", "@weekly", "--expires", "1 hour", "--misfire-grace", "10 minutes",
                                 "--max-attempts", "5"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("Saved weekly-report: cron @weekly")
    (row,) = rows(site, "Schedule")
    assert (row.name, row.handler, row.expression, row.expires, row.misfire_grace, row.max_attempts) == (
        "weekly-report", "report", "@weekly", "1 hour", "10 minutes", 5)
    listing = runner.invoke(args=["indexnow", "schedule", "list"]).output
    assert "weekly-report" in listing and "cron @weekly" in listing
