"""indexnow.schedule(...): the builder, saving (upsert by handler), list and remove."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from flask import Flask

import flask_indexnow
from flask_indexnow import IndexNow, OverlapPolicy

from ..conftest import FakeClock, rows
from .conftest import START, UTC

pytestmark = pytest.mark.every_backend  # the schedule upsert differs by database


def test_overlap_policy_is_exported_with_its_values() -> None:
    assert flask_indexnow.OverlapPolicy is OverlapPolicy
    assert [(p.name, p.value) for p in OverlapPolicy] == [("ALLOW", "allow"), ("SKIP", "skip"), ("BUFFER", "buffer")]


def test_spec_examples_save_and_list(site: Flask, ext: IndexNow) -> None:
    ext.schedule("cleanup_handler").every("1 hour").on_queue("maintenance").save()
    ext.schedule("daily_report", {"type": "summary"}).cron("0 3 * * *").save()
    ext.schedule("sync_inventory").every("5 minutes").overlap(OverlapPolicy.SKIP).save()
    listed = {s.handler: s for s in ext.scheduler.list()}
    assert list(listed) == ["cleanup_handler", "daily_report", "sync_inventory"]
    cleanup, report, sync = listed.values()
    assert (cleanup.kind, cleanup.expression, cleanup.queue, cleanup.overlap) == (
        "interval", "1 hour", "maintenance", OverlapPolicy.ALLOW)
    assert cleanup.next_run == START + timedelta(hours=1)  # one interval after creation
    assert cleanup.last_run is None and cleanup.enabled
    assert (report.kind, report.expression, report.timezone, report.payload) == ("cron", "0 3 * * *", "UTC", {"type": "summary"})
    assert report.next_run == datetime(2024, 5, 2, 3, tzinfo=UTC)
    assert report.queue == "default"
    assert sync.overlap is OverlapPolicy.SKIP and sync.next_run == START + timedelta(minutes=5)
    stored = rows(site, "Schedule", handler="sync_inventory")[0]
    assert (stored.overlap, stored.kind, stored.timezone) == ("skip", "interval", "UTC")


def test_cron_with_a_time_zone(site: Flask, ext: IndexNow) -> None:
    saved = ext.schedule("moscow").cron("0 3 * * *", timezone="Europe/Moscow").save()
    assert saved.timezone == "Europe/Moscow"
    assert saved.next_run == datetime(2024, 5, 2, 0, tzinfo=UTC)
    assert saved.describe == "cron 0 3 * * * (Europe/Moscow)"


def test_save_without_timing_is_a_runtime_error(site: Flask, ext: IndexNow) -> None:
    with pytest.raises(RuntimeError, match="every.*cron"):
        ext.schedule("nothing").on_queue("q").save()
    assert rows(site, "Schedule") == []


def test_bad_input_fails_at_once_not_at_save(ext: IndexNow) -> None:
    # No app context needed: the builder checks as it goes.
    builder = ext.schedule("h")
    with pytest.raises(ValueError, match="'every fortnight'"):
        builder.every("every fortnight")
    with pytest.raises(ValueError, match="5 fields"):
        builder.cron("0 3 * *")
    with pytest.raises(ValueError, match="unknown timezone 'Europe/Atlantis'"):
        builder.cron("0 3 * * *", timezone="Europe/Atlantis")
    with pytest.raises(ValueError, match="overlap"):
        builder.overlap("sometimes")
    with pytest.raises(ValueError, match="queue"):
        builder.on_queue("")
    with pytest.raises(ValueError, match="handler"):
        ext.schedule("")
    with pytest.raises(ValueError, match="JSON"):
        ext.schedule("h", {"when": datetime.now()})


def test_save_needs_an_app_context(ext: IndexNow) -> None:
    with pytest.raises(RuntimeError, match="application context"):
        ext.schedule("h").every("1 hour").save()


def test_overlap_accepts_the_string_values(site: Flask, ext: IndexNow) -> None:
    assert ext.schedule("h").every("1 hour").overlap("buffer").save().overlap is OverlapPolicy.BUFFER


def test_saving_again_upserts_by_handler_and_keeps_the_cadence(site: Flask, ext: IndexNow, clock: FakeClock) -> None:
    first = ext.schedule("report", {"v": 1}).every("1 hour").save()
    clock.advance(minutes=40)
    # An app declaring its schedules at every start-up must not push them forward.
    again = ext.schedule("report", {"v": 2}).every("60 minutes").on_queue("reports").overlap("skip").save()
    assert len(rows(site, "Schedule")) == 1
    assert again.next_run == first.next_run == START + timedelta(hours=1)
    assert (again.payload, again.queue, again.overlap, again.expression) == ({"v": 2}, "reports", OverlapPolicy.SKIP, "60 minutes")
    assert again.created_at == START


def test_changing_the_timing_restarts_it_from_now(site: Flask, ext: IndexNow, clock: FakeClock) -> None:
    ext.schedule("report").every("1 hour").save()
    clock.advance(minutes=40)
    changed = ext.schedule("report").every("2 hours").save()
    assert changed.next_run == START + timedelta(minutes=40, hours=2)
    as_cron = ext.schedule("report").cron("0 0 * * *").save()
    assert as_cron.kind == "cron" and as_cron.next_run == datetime(2024, 5, 2, tzinfo=UTC)
    assert len(rows(site, "Schedule")) == 1


def test_remove(site: Flask, ext: IndexNow) -> None:
    ext.schedule("a").every("1 hour").save()
    ext.schedule("b").every("1 hour").save()
    assert ext.scheduler.remove("a") is True
    assert ext.scheduler.remove("a") is False
    assert [s.handler for s in ext.scheduler.list()] == ["b"]


def test_a_disabled_schedule_is_re_enabled_by_save(site: Flask, ext: IndexNow, clock: FakeClock) -> None:
    ext.schedule("a").every("1 hour").save()
    state = site.extensions["indexnow"]
    table = state.models.Schedule.__table__
    with state.engine().begin() as connection:
        connection.execute(table.update().values(enabled=False))
    clock.advance(hours=2)
    assert ext.scheduler.tick() == 0  # disabled schedules never fire
    assert ext.schedule("a").every("1 hour").save().enabled is True
    assert ext.scheduler.tick() == 1
