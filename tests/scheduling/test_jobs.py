"""Jobs: claim, run outside transactions, retry with backoff, stale jobs, built-in handlers."""

from __future__ import annotations

import logging
import time
from datetime import datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from flask import Flask

from flask_indexnow import IndexNow
from flask_indexnow.scheduling import PROCESS_QUEUE, PRUNE_HISTORY, jobs, prune_history

from ..conftest import FakeClock, rows
from .conftest import START

pytestmark = pytest.mark.every_backend  # job claims and row locks differ by database


@pytest.fixture
def site(make_app, ext: IndexNow, clock: FakeClock) -> Flask:
    clock.set(START)
    app: Flask = make_app(indexnow=ext, INDEXNOW_JOB_MAX_ATTEMPTS=3, INDEXNOW_JOB_RETRY_DELAY=10)
    with app.app_context():
        yield app


def state_of(app: Flask) -> Any:
    return app.extensions["indexnow"]


def test_a_handler_gets_its_payload_and_the_job_completes(site: Flask, ext: IndexNow, clock: FakeClock) -> None:
    received: list[Any] = []
    ext.job("report")(received.append)
    jobs.dispatch(state_of(site), "report", {"type": "summary"})
    jobs.dispatch(state_of(site), "report")
    result = jobs.run_due(state_of(site))
    assert (result.completed, result.failed, result.retried) == (2, 0, 0)
    assert received == [{"type": "summary"}, None]
    for job in rows(site, "Job"):
        assert (job.status, job.attempts, job.finished_at, job.claim_token, job.last_error) == (
            "completed", 1, START, None, None)


def test_jobs_run_oldest_first_and_only_when_available(site: Flask, ext: IndexNow, clock: FakeClock) -> None:
    order: list[str] = []
    ext.job("h")(lambda payload: order.append(payload))
    jobs.dispatch(state_of(site), "h", "later", available_at=START + timedelta(minutes=1))
    jobs.dispatch(state_of(site), "h", "first")
    jobs.run_due(state_of(site))
    assert order == ["first"]
    clock.advance(minutes=1)
    jobs.run_due(state_of(site))
    assert order == ["first", "later"]


def test_failures_retry_with_exponential_backoff_then_fail(site: Flask, ext: IndexNow, clock: FakeClock) -> None:
    calls: list[int] = []

    @ext.job("flaky")
    def flaky(payload: Any) -> None:
        calls.append(1)
        raise RuntimeError("upstream said no")

    jobs.dispatch(state_of(site), "flaky")
    assert jobs.run_due(state_of(site)).retried == 1
    (job,) = rows(site, "Job")
    assert (job.status, job.attempts, job.available_at) == ("pending", 1, START + timedelta(seconds=10))
    assert "RuntimeError: upstream said no" in job.last_error
    clock.advance(seconds=9)
    assert jobs.run_due(state_of(site)).ran == 0  # still backing off
    clock.advance(seconds=1)
    assert jobs.run_due(state_of(site)).retried == 1
    (job,) = rows(site, "Job")
    assert (job.attempts, job.available_at) == (2, clock.now + timedelta(seconds=20))  # doubled
    clock.advance(seconds=20)
    assert jobs.run_due(state_of(site)).failed == 1
    (job,) = rows(site, "Job")
    assert (job.status, job.attempts, job.finished_at) == ("failed", 3, clock.now)
    clock.advance(hours=1)
    assert jobs.run_due(state_of(site)).ran == 0
    assert len(calls) == 3


def test_job_attempts_are_separate_from_url_attempts(site: Flask, ext: IndexNow) -> None:
    ext.job("h")(lambda payload: None)
    jobs.dispatch(state_of(site), "h")
    assert rows(site, "Job")[0].max_attempts == 3 != site.config["INDEXNOW_MAX_ATTEMPTS"]


def test_an_unregistered_handler_fails_loudly(site: Flask, caplog: pytest.LogCaptureFixture) -> None:
    jobs.dispatch(state_of(site), "nobody_registered_me")
    with caplog.at_level(logging.ERROR, "flask_indexnow"):
        result = jobs.run_due(state_of(site))
    assert result.retried == 1 and result.errors
    (job,) = rows(site, "Job")
    assert "no handler named 'nobody_registered_me' is registered in this process" in job.last_error
    assert "nobody_registered_me" in caplog.text


def test_a_handler_exiting_does_not_escape(site: Flask, ext: IndexNow) -> None:
    import sys

    ext.job("quitter")(lambda payload: sys.exit(3))
    ext.job("fine")(lambda payload: None)
    jobs.dispatch(state_of(site), "quitter")
    jobs.dispatch(state_of(site), "fine")
    result = jobs.run_due(state_of(site))
    assert (result.retried, result.completed) == (1, 1)
    assert "SystemExit: 3" in rows(site, "Job", handler="quitter")[0].last_error


def test_queues_filter_what_a_worker_takes(site: Flask, ext: IndexNow) -> None:
    ran: list[Any] = []
    ext.job("h")(ran.append)
    jobs.dispatch(state_of(site), "h", "default job")
    jobs.dispatch(state_of(site), "h", "mail job", queue="emails")
    jobs.dispatch(state_of(site), "h", "report job", queue="reports")
    jobs.run_due(state_of(site), ["emails", "reports"])
    assert sorted(ran) == ["mail job", "report job"]
    jobs.run_due(state_of(site))
    assert len(ran) == 3


def test_run_due_stops_at_its_limit_and_when_asked(site: Flask, ext: IndexNow) -> None:
    ext.job("h")(lambda payload: None)
    for _ in range(5):
        jobs.dispatch(state_of(site), "h")
    assert jobs.run_due(state_of(site), limit=2).completed == 2
    assert jobs.run_due(state_of(site), should_stop=lambda: True).ran == 0
    assert jobs.run_due(state_of(site)).completed == 3


def test_handlers_run_outside_any_transaction(site: Flask, ext: IndexNow) -> None:
    state = state_of(site)
    seen: dict[str, Any] = {}

    @ext.job("inspect")
    def inspect(payload: Any) -> None:
        seen["session_in_transaction"] = state.db.session().in_transaction()
        job_table = state.models.Job.__table__
        # Another connection can read the job as claimed and write at once:
        # the claim was committed and no lock is held.
        with state.engine().begin() as connection:
            seen["status"] = connection.execute(sa.select(job_table.c.status)).scalar()
            connection.execute(job_table.update().values(last_error="written by the handler"))

    jobs.dispatch(state, "inspect")
    assert jobs.run_due(state).completed == 1
    assert seen == {"session_in_transaction": False, "status": "processing"}


def test_a_handler_can_use_the_session(site: Flask, ext: IndexNow) -> None:
    state = state_of(site)

    @ext.job("enqueue")
    def enqueue(payload: Any) -> None:
        ext.enqueue(payload["url"])

    jobs.dispatch(state, "enqueue", {"url": "https://example.com/from-a-job"})
    assert jobs.run_due(state).completed == 1
    assert [r.url for r in rows(site, "Queue")] == ["https://example.com/from-a-job"]


def test_stale_jobs_are_taken_back(make_app, ext: IndexNow, clock: FakeClock) -> None:
    clock.set(START)
    app = make_app(indexnow=ext, INDEXNOW_STALE_AFTER=600, INDEXNOW_JOB_MAX_ATTEMPTS=2)
    ran: list[Any] = []
    ext.job("h")(ran.append)
    with app.app_context():
        state = state_of(app)
        jobs.dispatch(state, "h", "again")
        jobs.dispatch(state, "h", "last")
        first = jobs.claim(state)
        second = jobs.claim(state)
        assert first is not None and second is not None
        table = state.models.Job.__table__
        with state.engine().begin() as connection:  # the second one was on its last attempt
            connection.execute(table.update().where(table.c.id == second.id).values(attempts=2))
        clock.advance(seconds=599)
        assert jobs.reset_stale(state) == 0
        clock.advance(seconds=2)
        assert jobs.reset_stale(state) == 2
        by_payload = {j.payload: j for j in rows(app, "Job")}
        assert by_payload["again"].status == "pending" and by_payload["again"].claim_token is None
        assert by_payload["last"].status == "failed" and "stopped without finishing" in by_payload["last"].last_error
        # The worker that lost the claim finishes late: its outcome is not recorded.
        assert jobs.finish(state, first, None) == "lost"
        assert jobs.run_due(state).completed == 1
        assert ran == ["again"]


def test_a_running_job_keeps_its_claim_fresh(make_app, ext: IndexNow, clock: FakeClock) -> None:
    """The lease thread renews claimed_at, so a long job is not taken back as stale."""
    clock.set(START)
    # INDEXNOW_TIMEOUT: a POST must end before its claim is stale.
    app = make_app(indexnow=ext, INDEXNOW_STALE_AFTER=1.5, INDEXNOW_TIMEOUT=1)
    outcome: dict[str, Any] = {}

    @ext.job("long")
    def long_job(payload: Any) -> None:
        state = state_of(app)
        table = state.models.Job.__table__
        clock.advance(minutes=30)  # far past INDEXNOW_STALE_AFTER
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with state.engine().connect() as connection:
                claimed_at = connection.execute(sa.select(table.c.claimed_at)).scalar()
            if claimed_at == clock.now:
                break
            time.sleep(0.1)
        outcome["reset"] = jobs.reset_stale(state)  # what another worker would do now

    with app.app_context():
        jobs.dispatch(state_of(app), "long")
        assert jobs.run_due(state_of(app)).completed == 1
    assert outcome == {"reset": 0}
    assert rows(app, "Job")[0].status == "completed"


# -- built-in handlers --------------------------------------------------------------


def test_builtin_process_queue_job_delivers_urls(make_app, ext: IndexNow, endpoint, clock: FakeClock) -> None:
    app = make_app(indexnow=ext)
    with app.app_context():
        ext.enqueue("https://example.com/a")
        jobs.dispatch(state_of(app), PROCESS_QUEUE)
        assert jobs.run_due(state_of(app)).completed == 1
    assert endpoint.urls_received() == ["https://example.com/a"]
    assert rows(app, "Queue") == []


def add_history(app: Flask, ages_in_days: list[float], now: datetime = START) -> None:
    state = state_of(app)
    table = state.models.History.__table__
    with app.app_context(), state.engine().begin() as connection:
        connection.execute(table.insert(), [
            {"host": "example.com", "url": f"https://example.com/{i}", "action": "update", "status": "success",
             "attempts": 1, "created_at": now - timedelta(days=age)}
            for i, age in enumerate(ages_in_days)
        ])


def test_prune_history_deletes_old_rows_in_chunks(make_app, ext: IndexNow, clock: FakeClock) -> None:
    clock.set(START)
    app = make_app(indexnow=ext, INDEXNOW_HISTORY_RETENTION_DAYS=30)
    add_history(app, [40, 35, 31, 30.5, 29.9, 1, 0])
    with app.app_context():
        state = state_of(app)
        old_job, new_job, open_job = (f"{n}@x" for n in ("old", "new", "open"))
        for key in (old_job, new_job, open_job):
            jobs.dispatch(state, "h", occurrence_key=key)
        table = state.models.Job.__table__
        with state.engine().begin() as connection:
            connection.execute(table.update().where(table.c.occurrence_key == old_job)
                               .values(status="completed", finished_at=START - timedelta(days=31)))
            connection.execute(table.update().where(table.c.occurrence_key == new_job)
                               .values(status="failed", finished_at=START - timedelta(days=2)))
        result = prune_history(state, chunk=2)
    assert (result.history, result.jobs, result.days) == (4, 1, 30)
    assert len(rows(app, "History")) == 3
    assert sorted(j.occurrence_key for j in rows(app, "Job")) == sorted([new_job, open_job])


def test_prune_history_days_override_and_retention_off(make_app, ext: IndexNow, clock: FakeClock) -> None:
    clock.set(START)
    app = make_app(indexnow=ext, INDEXNOW_HISTORY_RETENTION_DAYS=None)
    add_history(app, [400, 5, 1])
    with app.app_context():
        assert ext.prune_history().history == 0
        assert "retention is off" in str(ext.prune_history())
        assert ext.prune_history(days=3).history == 2
        with pytest.raises(ValueError, match="days"):
            ext.prune_history(days=0)


def test_builtin_prune_history_job(make_app, ext: IndexNow, clock: FakeClock) -> None:
    clock.set(START)
    app = make_app(indexnow=ext, INDEXNOW_HISTORY_RETENTION_DAYS=7)
    add_history(app, [10, 8, 6])
    with app.app_context():
        jobs.dispatch(state_of(app), PRUNE_HISTORY)
        assert jobs.run_due(state_of(app)).completed == 1
    assert len(rows(app, "History")) == 1
