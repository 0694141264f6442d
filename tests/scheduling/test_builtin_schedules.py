"""The built-in schedules and the tick's backup cron (ensure_builtin_schedules)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from flask import Flask

from flask_indexnow import IndexNow, OverlapPolicy
from flask_indexnow.scheduling import PROCESS_QUEUE, PRUNE_HISTORY, ensure_builtin_schedules
from flask_indexnow.scheduling.schedules import ScheduleInfo

from ..conftest import FakeClock, rows
from .conftest import START

pytestmark = pytest.mark.every_backend  # the schedule upsert differs by database


def _schedule(ext: IndexNow, handler: str) -> ScheduleInfo | None:
    return next((s for s in ext.scheduler.list() if s.handler == handler), None)


def count_queries(engine: sa.Engine, fn: Any) -> int:
    statements: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        statements.append(statement)

    sa.event.listen(engine, "before_cursor_execute", record)
    try:
        fn()
    finally:
        sa.event.remove(engine, "before_cursor_execute", record)
    return len(statements)


def test_builtins_are_created_once_and_first_due_one_interval_later(make_app, clock: FakeClock) -> None:
    clock.set(START)
    app: Flask = make_app()
    with app.app_context():
        state = app.extensions["indexnow"]
        ensure_builtin_schedules(state)
        listed = {s.handler: s for s in state.extension.scheduler.list()}
        assert set(listed) == {PROCESS_QUEUE, PRUNE_HISTORY}
        assert listed[PROCESS_QUEUE].expression == "1 minute"
        assert listed[PROCESS_QUEUE].next_run == START + timedelta(minutes=1)
        assert listed[PRUNE_HISTORY].expression == "1 day"
        assert listed[PRUNE_HISTORY].next_run == START + timedelta(days=1)
        assert {s.overlap for s in listed.values()} == {OverlapPolicy.SKIP}
        # Remembered: later calls make no query at all.
        assert count_queries(state.engine(), lambda: ensure_builtin_schedules(state)) == 0
    state.scheduler.builtins_checked_at = None  # look at the table again


def test_an_edited_builtin_is_left_alone_and_a_missing_one_comes_back(make_app, clock: FakeClock) -> None:
    clock.set(START)
    ext = IndexNow()
    app: Flask = make_app(indexnow=ext)
    with app.app_context():
        state = app.extensions["indexnow"]
        ext.schedule(PROCESS_QUEUE).every("5 minutes").on_queue("urls").save()
        ensure_builtin_schedules(state)
        assert _schedule(ext, PROCESS_QUEUE).expression == "5 minutes"  # type: ignore[union-attr]
        ext.scheduler.remove(PRUNE_HISTORY)
        state.scheduler.builtins_checked_at = None  # look at the table again
        ensure_builtin_schedules(state)
        assert _schedule(ext, PRUNE_HISTORY) is not None
        state.scheduler.builtins_checked_at = None  # look at the table again


def test_no_prune_schedule_without_retention(make_app) -> None:
    app: Flask = make_app(INDEXNOW_HISTORY_RETENTION_DAYS=None)
    with app.app_context():
        state = app.extensions["indexnow"]
        ensure_builtin_schedules(state)
        assert [s.handler for s in state.extension.scheduler.list()] == [PROCESS_QUEUE]
        state.scheduler.builtins_checked_at = None  # look at the table again


def test_the_tick_is_the_backup_cron(make_app, endpoint) -> None:
    app: Flask = make_app()
    with app.app_context():
        app.extensions["indexnow"].extension.tick()
    assert [r.handler for r in rows(app, "Schedule")] == [PROCESS_QUEUE, PRUNE_HISTORY]
    app.extensions["indexnow"].scheduler.builtins_checked_at = None  # look at the table again


def test_the_tick_leaves_schedules_alone_when_the_scheduler_is_off(make_app, endpoint) -> None:
    app: Flask = make_app(INDEXNOW_SCHEDULER_ENABLED=False)
    with app.app_context():
        app.extensions["indexnow"].extension.tick()
    assert rows(app, "Schedule") == []


def test_a_database_problem_is_logged_not_raised(make_app, caplog) -> None:
    app: Flask = make_app()
    with app.app_context():
        state = app.extensions["indexnow"]
        with state.engine().begin() as connection:
            state.models.Schedule.__table__.drop(connection)
        try:
            ensure_builtin_schedules(state)  # must not raise into the tick
            # A missing table is left to the caller's next query, which reports it in one
            # line ("run flask indexnow init-db"): no warning and no traceback here.
            assert not [r for r in caplog.records if r.exc_info], caplog.text
        finally:
            with state.engine().begin() as connection:
                state.models.Schedule.__table__.create(connection)
        ensure_builtin_schedules(state)  # not remembered as done: tried again
        assert len(rows(app, "Schedule")) == 2
        state.scheduler.builtins_checked_at = None  # look at the table again
