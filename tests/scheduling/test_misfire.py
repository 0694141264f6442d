"""misfire_grace: an occurrence found later than the grace is recorded ``missed``, not run late."""

from __future__ import annotations

from datetime import timedelta

import pytest
from flask import Flask

from flask_indexnow import IndexNow

from ..conftest import FakeClock, rows
from .conftest import START

pytestmark = pytest.mark.every_backend  # the decision and its history row are one transaction on each database


def outcomes(ext: IndexNow, name: str) -> list[tuple[str, str]]:
    return [(o.outcome, o.due_at.strftime("%H:%M")) for o in ext.scheduler.history(name)]


def test_within_the_grace_it_runs(site: Flask, ext: IndexNow, clock: FakeClock) -> None:
    ext.schedule("h").every("1 hour").misfire_grace("10 minutes").save()
    clock.set(START + timedelta(hours=1, minutes=9))
    assert ext.scheduler.tick() == 1
    assert outcomes(ext, "h") == [("dispatched", "13:00")]


def test_later_than_the_grace_it_is_missed_and_next_run_moves_to_the_future(site: Flask, ext: IndexNow,
                                                                           clock: FakeClock) -> None:
    ext.schedule("h").every("1 hour").misfire_grace("10 minutes").save()
    clock.set(START + timedelta(hours=3, minutes=30))  # 13:00, 14:00 and 15:00 all passed; 15:30 now
    assert ext.scheduler.tick() == 0
    assert rows(site, "Job") == []
    assert outcomes(ext, "h") == [("missed", "13:00")]
    (schedule,) = ext.scheduler.list()
    assert schedule.next_run == START + timedelta(hours=4)
    assert schedule.last_run is None  # nothing ran
    assert ext.scheduler.tick() == 0  # and it is not missed again


def test_the_latest_occurrence_within_the_grace_runs_after_downtime(site: Flask, ext: IndexNow,
                                                                   clock: FakeClock) -> None:
    ext.schedule("h").cron("0 * * * *").misfire_grace("10 minutes").save()
    clock.set(START + timedelta(hours=3, minutes=5))  # 15:05: 13:00 and 14:00 are stale, 15:00 is not
    assert ext.scheduler.tick() == 1
    (job,) = rows(site, "Job")
    assert job.occurrence_key == "h@2024-05-01T15:00:00+00:00"
    assert outcomes(ext, "h") == [("dispatched", "15:00"), ("missed", "13:00")]
    assert ext.scheduler.list()[0].next_run == START + timedelta(hours=4)


def test_without_a_grace_a_late_occurrence_runs_once(site: Flask, ext: IndexNow, clock: FakeClock) -> None:
    ext.schedule("h").every("1 hour").save()
    clock.set(START + timedelta(hours=3, minutes=30))
    assert ext.scheduler.tick() == 1
    assert ext.scheduler.tick() == 0
    assert outcomes(ext, "h") == [("dispatched", "13:00")]


@pytest.mark.parametrize(("value", "problem"), [
    ("1 month", "fixed length"), ("soon", "invalid interval"), (10, "must be an interval"),
])
def test_a_bad_grace_is_refused(site: Flask, ext: IndexNow, value: object, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        ext.schedule("h").every("1 hour").misfire_grace(value)  # type: ignore[arg-type]
    assert rows(site, "Schedule") == []
