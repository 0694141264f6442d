"""flask indexnow work / schedule list|add|remove|run / prune-history."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from click.testing import Result
from flask import Flask

from flask_indexnow import IndexNow
from flask_indexnow.scheduling import jobs

from ..conftest import FakeClock, rows
from .conftest import START


@pytest.fixture
def site(make_app, ext: IndexNow, clock: FakeClock) -> Flask:
    clock.set(START)
    app: Flask = make_app(indexnow=ext, INDEXNOW_SCHEDULER_ENABLED=False)
    with app.app_context():
        yield app


def run(app: Flask, *args: str) -> Result:
    return app.test_cli_runner().invoke(args=["indexnow", *args])


def one_line_error(result: Result, *fragments: str) -> None:
    assert result.exit_code == 1, result.output
    assert result.output.startswith("Error: ") and result.output.count("\n") == 1, result.output
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in result.output


def test_add_every_and_list(site: Flask) -> None:
    result = run(site, "schedule", "add", "cleanup_handler", "--every", "1 hour", "--queue", "maintenance",
                 "--overlap", "skip", "--payload", '{"type": "summary"}')
    assert result.exit_code == 0, result.output
    assert "next run 2024-05-01 13:00:00 UTC" in result.output
    (row,) = rows(site, "Schedule")
    assert (row.handler, row.kind, row.expression, row.queue, row.overlap, row.payload) == (
        "cleanup_handler", "interval", "1 hour", "maintenance", "skip", {"type": "summary"})
    listing = run(site, "schedule", "list")
    assert listing.exit_code == 0
    header, line = listing.output.splitlines()
    assert header.split() == ["NAME", "HANDLER", "WHEN", "QUEUE", "OVERLAP", "NEXT", "RUN", "LAST", "RUN",
                              "STATE", "FROM", "LAST", "OUTCOME"]
    assert line.split() == ["cleanup_handler", "cleanup_handler", "every", "1", "hour", "maintenance", "skip",
                            "2024-05-01", "13:00:00", "UTC", "-", "active", "manual", "-"]


def test_add_cron_with_a_time_zone(site: Flask) -> None:
    result = run(site, "schedule", "add", "nightly_report", "--cron", "0 3 * * *", "--timezone", "Europe/Moscow",
                 "--queue", "reports")
    assert result.exit_code == 0, result.output
    assert "cron 0 3 * * * (Europe/Moscow)" in result.output
    assert "next run 2024-05-02 00:00:00 UTC" in result.output
    assert "cron 0 3 * * * (Europe/Moscow)" in run(site, "schedule", "list").output


def test_list_when_empty(site: Flask) -> None:
    result = run(site, "schedule", "list")
    assert result.exit_code == 0 and result.output == "No schedules.\n"


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["--every", "every so often"], ["invalid interval 'every so often'"]),
        (["--cron", "0 3 * *"], ["exactly 5 fields"]),
        (["--cron", "0 3 * * *", "--timezone", "Mars/Olympus"], ["unknown timezone 'Mars/Olympus'"]),
        (["--every", "1 hour", "--payload", "{not json"], ["--payload is not valid JSON"]),
        (["--every", "1 hour", "--cron", "0 3 * * *"], ["exactly one of --every or --cron"]),
        ([], ["exactly one of --every or --cron"]),
        (["--every", "1 hour", "--timezone", "Europe/Rome"], ["--timezone only applies to --cron"]),
        (["--every", "1 hour", "--queue", ""], ["queue name"]),
    ],
)
# The arguments are checked before anything is written: SQLite is enough.
def test_add_mistakes_are_one_line_and_save_nothing(site: Flask, args: list[str], fragments: list[str]) -> None:
    one_line_error(run(site, "schedule", "add", "h", *args), *fragments)
    assert rows(site, "Schedule") == []


def test_add_rejects_an_unknown_overlap_policy(site: Flask) -> None:
    result = run(site, "schedule", "add", "h", "--every", "1 hour", "--overlap", "sometimes")
    assert result.exit_code == 2 and "sometimes" in result.output
    assert rows(site, "Schedule") == []


def test_remove(site: Flask, ext: IndexNow) -> None:
    ext.schedule("cleanup_handler").every("1 hour").save()
    result = run(site, "schedule", "remove", "cleanup_handler")
    assert result.exit_code == 0 and "Removed" in result.output
    assert rows(site, "Schedule") == []
    one_line_error(run(site, "schedule", "remove", "cleanup_handler"), "no schedule named 'cleanup_handler'")


def test_run_dispatches_due_schedules(site: Flask, ext: IndexNow, clock: FakeClock) -> None:
    ext.schedule("a").every("1 hour").save()
    ext.schedule("b").every("1 day").save()
    clock.advance(hours=1)
    result = run(site, "schedule", "run")
    assert result.exit_code == 0 and result.output == "Dispatched 1 job(s)\n"
    assert [j.handler for j in rows(site, "Job")] == ["a"]
    last_run = rows(site, "Schedule", handler="a")[0].last_run
    assert last_run == clock.now
    assert "2024-05-01 13:00:00 UTC" in run(site, "schedule", "list").output


def test_run_creates_the_builtin_schedules_when_the_scheduler_is_on(make_app, clock: FakeClock) -> None:
    clock.set(START)
    app = make_app()
    result = run(app, "schedule", "run")
    assert result.exit_code == 0, result.output
    assert {r.handler for r in rows(app, "Schedule")} == {"indexnow.process_queue", "indexnow.prune_history"}
    app.extensions["indexnow"].scheduler.builtins_checked_at = None  # look at the table again


def test_work_once_delivers_and_runs_jobs_but_does_not_evaluate_schedules(site: Flask, ext: IndexNow, endpoint,
                                                                          clock: FakeClock) -> None:
    ran: list[Any] = []
    ext.job("h")(ran.append)
    ext.schedule("h", "scheduled").every("1 minute").save()
    jobs.dispatch(site.extensions["indexnow"], "h", "direct")
    jobs.dispatch(site.extensions["indexnow"], "h", "elsewhere", queue="other")
    clock.advance(minutes=2)
    result = run(site, "work", "--once", "--queue", "default")
    assert result.exit_code == 0, result.output
    assert "1 job(s) run: 1 completed" in result.output
    assert ran == ["direct"]
    assert rows(site, "Schedule")[0].last_run is None
    assert {j.payload: j.status for j in rows(site, "Job")} == {"direct": "completed", "elsewhere": "pending"}


def test_work_rejects_a_negative_sleep(site: Flask) -> None:
    result = run(site, "work", "--once", "--sleep", "-1")
    assert result.exit_code == 2


def test_prune_history(make_app, clock: FakeClock) -> None:
    clock.set(START)
    app = make_app(INDEXNOW_HISTORY_RETENTION_DAYS=30)
    state = app.extensions["indexnow"]
    table = state.models.History.__table__
    with app.app_context(), state.engine().begin() as connection:
        connection.execute(table.insert(), [
            {"host": "example.com", "url": f"https://example.com/{age}", "action": "update", "status": "success",
             "attempts": 1, "created_at": START - timedelta(days=age)}
            for age in (45, 31, 10, 2)
        ])
    result = run(app, "prune-history")
    assert result.exit_code == 0, result.output
    assert "pruned 2 history row(s)" in result.output
    result = run(app, "prune-history", "--days", "5")
    assert "pruned 1 history row(s)" in result.output
    assert [r.url for r in rows(app, "History")] == ["https://example.com/2"]
    assert run(app, "prune-history", "--days", "0").exit_code == 2


def test_status_reports_whether_the_scheduler_runs(site: Flask, ext: IndexNow, clock: FakeClock) -> None:
    assert "No `flask indexnow work` process has been seen recently" in run(site, "status").output
    run(site, "schedule", "run")
    assert "A worker (`flask indexnow work`) has run recently." in run(site, "status").output
