"""Declared schedules follow the code: sync() creates, updates, and pauses (undeclared) what left the code."""

from __future__ import annotations

from datetime import timedelta

import pytest
from click.testing import Result
from flask import Flask

from flask_indexnow import IndexNow
from flask_indexnow.scheduling import Worker

from ..conftest import FakeClock, rows
from .conftest import START

pytestmark = pytest.mark.every_backend  # the upsert and the set-based undeclare on each database


def cli(app: Flask, *args: str) -> Result:
    return app.test_cli_runner().invoke(args=["indexnow", "schedule", *args])


def by_name(ext: IndexNow) -> dict[str, object]:
    return {s.name: s for s in ext.scheduler.list()}


def test_declare_needs_no_app_context_and_sync_stores_it(make_app, clock: FakeClock) -> None:
    clock.set(START)
    ext = IndexNow()
    spec = ext.schedule("report", {"type": "full"}, name="nightly").cron("@daily").expires("1 hour").declare()
    assert spec.name == "nightly" and list(ext.declared_schedules) == ["nightly"]
    app: Flask = make_app(indexnow=ext, INDEXNOW_SCHEDULER_ENABLED=False)
    with app.app_context():
        assert rows(app, "Schedule") == []  # declaring wrote nothing
        result = ext.scheduler.sync()
        assert result.created == ["nightly"]
        (stored,) = ext.scheduler.list()
        assert (stored.name, stored.handler, stored.expression, stored.expires, stored.source) == (
            "nightly", "report", "@daily", "1 hour", "declared")
        clock.advance(minutes=30)
        again = ext.scheduler.sync()  # every start syncs: the same declaration changes nothing
        assert again.updated == ["nightly"] and again.created == []
        assert ext.scheduler.list()[0].next_run == stored.next_run


def test_a_schedule_gone_from_the_code_is_paused_and_comes_back(site: Flask, ext: IndexNow,
                                                              clock: FakeClock) -> None:
    ext.schedule("a").every("1 hour").declare()
    ext.schedule("b").every("1 hour").declare()
    ext.schedule("manual").every("1 hour").save()
    ext.scheduler.sync()
    clock.advance(hours=1)
    ext.scheduler.tick()  # history to keep
    del ext.declared_schedules["b"]
    result = ext.scheduler.sync()
    assert result.undeclared == ["b"]
    listed = by_name(ext)
    assert listed["b"].paused and listed["b"].source == "undeclared"  # type: ignore[attr-defined]
    assert not listed["manual"].paused and listed["manual"].source == "manual"  # type: ignore[attr-defined]
    assert [o.outcome for o in ext.scheduler.history("b")] == ["dispatched"]  # kept, with its history
    clock.advance(hours=1)
    assert ext.scheduler.tick() == 2  # "a" and "manual"; not "b"
    assert ext.scheduler.sync().undeclared == []  # marked once
    ext.schedule("b").every("1 hour").declare()
    back = ext.scheduler.sync()
    assert back.redeclared == ["b"]
    listed = by_name(ext)
    assert not listed["b"].paused and listed["b"].source == "declared"  # type: ignore[attr-defined]
    assert listed["b"].next_run > clock.now  # type: ignore[attr-defined]


def test_sync_never_touches_a_schedule_saved_by_hand(site: Flask, ext: IndexNow) -> None:
    ext.schedule("h", {"by": "hand"}).every("1 day").save()
    ext.schedule("h", {"by": "code"}).every("1 hour").declare()
    result = ext.scheduler.sync()
    assert result.conflicts == ["h"] and "saved by hand" in str(result)
    (row,) = rows(site, "Schedule")
    assert (row.payload, row.expression, row.origin) == ({"by": "hand"}, "1 day", "manual")


def test_an_operator_pause_survives_sync(site: Flask, ext: IndexNow) -> None:
    ext.schedule("h").every("1 hour").declare()
    ext.scheduler.sync()
    ext.scheduler.pause("h")
    ext.scheduler.sync()
    assert ext.scheduler.list()[0].paused


def test_a_changed_declaration_is_updated(site: Flask, ext: IndexNow, clock: FakeClock) -> None:
    ext.schedule("h").every("1 hour").declare()
    ext.scheduler.sync()
    ext.schedule("h").every("1 day").on_queue("slow").declare()  # the same name: replaces the declaration
    clock.advance(minutes=5)
    ext.scheduler.sync()
    (stored,) = ext.scheduler.list()
    assert (stored.expression, stored.queue, stored.next_run) == ("1 day", "slow", clock.now + timedelta(days=1))


def test_the_worker_syncs_once_at_start_and_the_cli_syncs(site: Flask, ext: IndexNow) -> None:
    ext.schedule("h").every("1 hour").declare()
    worker = Worker(site.extensions["indexnow"])
    worker.run_once(schedules=True)
    assert by_name(ext)["h"].source == "declared"  # type: ignore[attr-defined]
    del ext.declared_schedules["h"]
    worker.run_once(schedules=True)  # not again in the same worker
    assert not by_name(ext)["h"].paused  # type: ignore[attr-defined]
    result = cli(site, "sync")
    assert result.exit_code == 0 and "1 no longer declared (paused): h" in result.output
    (line,) = [line for line in cli(site, "list").output.splitlines() if line.startswith("h ")]
    assert line.split()[-3:-1] == ["paused", "undeclared"]


def test_list_shows_where_each_came_from(make_app, ext: IndexNow, clock: FakeClock) -> None:
    clock.set(START)
    app: Flask = make_app(indexnow=ext)  # the scheduler on: built-in schedules
    with app.app_context():
        ext.schedule("code").every("1 hour").declare()
        ext.scheduler.sync()
        ext.schedule("hand").every("1 hour").save()
        assert cli(app, "run").exit_code == 0  # creates the built-in ones
        sources = {line.split()[0]: line.split()[-2] for line in cli(app, "list").output.splitlines()[1:]}
    assert sources == {"code": "declared", "hand": "manual", "indexnow.process_queue": "built-in",
                       "indexnow.prune_history": "built-in"}
