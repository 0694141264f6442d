"""SPEC §13 metrics: every value read from the database at scrape time, right across apps and pruning.

Scrapes go through the real route and prometheus_client's own parser
(tests/metrics/helpers.py). SQLite, PostgreSQL and MariaDB: the totals upsert and
the bounded counts are written per dialect.
"""

from __future__ import annotations

import pytest

from flask_indexnow import IndexNow

from ..conftest import rows
from .helpers import TOKEN, scrape, value

BACKENDS = pytest.mark.parametrize("backend", ["sqlite", "postgresql", "mariadb"])


def ext(app) -> IndexNow:
    return app.extensions["indexnow"].extension  # type: ignore[no-any-return]


def deliver(app, *urls: str) -> None:
    with app.app_context():
        ext(app).enqueue_many(list(urls))
        ext(app).process_queue()


@BACKENDS
def test_every_outcome_is_counted_per_status(make_app, endpoint, clock):
    app = make_app(INDEXNOW_METRICS_TOKEN=TOKEN, INDEXNOW_MAX_ATTEMPTS=2, INDEXNOW_RETRY_DELAY=60)
    engine = endpoint.url
    endpoint.script(200, 200)  # two hosts: two POSTs
    deliver(app, "https://a.example/1", "https://a.example/2", "https://b.example/1")
    endpoint.script(503)  # a temporary failure: retry
    deliver(app, "https://c.example/1")
    endpoint.script(422)  # a refused single URL: failed at once
    deliver(app, "https://d.example/1")
    samples = scrape(app)
    assert value(samples, "indexnow_deliveries_total", status="success", engine=engine) == 3
    assert value(samples, "indexnow_deliveries_total", status="retry", engine=engine) == 1
    assert value(samples, "indexnow_deliveries_total", status="failed", engine=engine) == 1
    assert value(samples, "indexnow_deliveries_total", status="dry_run", engine=engine) == 0
    assert value(samples, "indexnow_deliveries_total", status="skipped", engine=engine) == 0
    assert value(samples, "indexnow_queue_urls", status="pending", engine=engine) == 1  # the retry waits
    assert value(samples, "indexnow_queue_urls", status="failed", engine=engine) == 1
    assert value(samples, "indexnow_queue_urls", status="processing", engine=engine) == 0
    assert value(samples, "indexnow_last_success_timestamp_seconds", engine=engine) == clock.now.timestamp()
    assert value(samples, "indexnow_queue_oldest_due_age_seconds", engine=engine) == 0  # the retry is not due yet

    clock.advance(90)  # the retry has been due for 30 s
    assert value(scrape(app), "indexnow_queue_oldest_due_age_seconds", engine=engine) == 30
    endpoint.script(503)  # its second attempt is its last: failed
    with app.app_context():
        ext(app).process_queue()
    samples = scrape(app)
    assert value(samples, "indexnow_deliveries_total", status="retry", engine=engine) == 1
    assert value(samples, "indexnow_deliveries_total", status="failed", engine=engine) == 2
    assert value(samples, "indexnow_queue_urls", status="failed", engine=engine) == 2
    assert value(samples, "indexnow_queue_urls", status="pending", engine=engine) == 0
    history = sorted(h.status for h in rows(app, "History"))
    assert history == ["failed", "failed", "retry", "success", "success", "success"]


@BACKENDS
def test_counters_survive_pruning_and_a_second_app_adds_to_them(make_app, endpoint, clock):
    """Another app (another process) on the same tables writes; pruning the history lowers nothing."""
    first = make_app(INDEXNOW_METRICS_TOKEN=TOKEN)
    second = make_app(INDEXNOW_DRY_RUN=True)  # same database and table prefix
    engine = endpoint.url
    deliver(first, "https://a.example/1", "https://a.example/2")
    deliver(second, "https://a.example/3")
    samples = scrape(first)
    assert value(samples, "indexnow_deliveries_total", status="success", engine=engine) == 2
    assert value(samples, "indexnow_deliveries_total", status="dry_run", engine=engine) == 1
    stamp = value(samples, "indexnow_last_success_timestamp_seconds", engine=engine)

    clock.advance(days=3)
    with first.app_context():
        assert ext(first).prune_history(days=1).history == 3
    assert rows(first, "History") == []
    samples = scrape(first)
    assert value(samples, "indexnow_deliveries_total", status="success", engine=engine) == 2
    assert value(samples, "indexnow_deliveries_total", status="dry_run", engine=engine) == 1
    assert value(samples, "indexnow_last_success_timestamp_seconds", engine=engine) == stamp

    deliver(second, "https://a.example/4")  # the counter goes on from where it was
    assert value(scrape(first), "indexnow_deliveries_total", status="dry_run", engine=engine) == 2


def test_engines_each_get_their_series_and_their_pause(make_app, clock):
    from tests.endpoint_server import EndpointServer

    with EndpointServer() as one, EndpointServer() as two:
        app = make_app(INDEXNOW_METRICS_TOKEN=TOKEN, INDEXNOW_ENDPOINTS=[one.url, two.url],
                       INDEXNOW_REQUESTS_PER_MINUTE=10)
        two.answer(429, retry_after=120)
        deliver(app, "https://a.example/1")
        samples = scrape(app)
    assert value(samples, "indexnow_deliveries_total", status="success", engine=one.url) == 1
    assert value(samples, "indexnow_deliveries_total", status="retry", engine=two.url) == 1
    assert value(samples, "indexnow_queue_urls", status="pending", engine=one.url) == 0
    assert value(samples, "indexnow_queue_urls", status="pending", engine=two.url) == 1
    assert value(samples, "indexnow_endpoint_paused", engine=one.url) == 0
    assert value(samples, "indexnow_endpoint_paused", engine=two.url) == 1
    assert value(samples, "indexnow_request_budget_remaining", engine=one.url) == 9
    assert value(samples, "indexnow_request_budget_remaining", engine=two.url) == 9
    assert value(samples, "indexnow_last_success_timestamp_seconds", engine=one.url) == clock.now.timestamp()
    # Never succeeded: 0 (the epoch) rather than no series, so "no success for an hour" fires for it.
    assert value(samples, "indexnow_last_success_timestamp_seconds", engine=two.url) == 0


def test_no_budget_no_budget_series(make_app, endpoint, clock):
    app = make_app(INDEXNOW_METRICS_TOKEN=TOKEN)
    assert not [name for name, _ in scrape(app) if name == "indexnow_request_budget_remaining"]


def test_jobs_schedules_and_checks(make_app, endpoint, clock):
    app = make_app(INDEXNOW_METRICS_TOKEN=TOKEN, INDEXNOW_DRY_RUN=True)
    with app.app_context():
        ext(app).schedule("indexnow.prune_history").every("1 day").save()
        ext(app).schedule("indexnow.process_queue").every("1 minute").on_queue("fast").save()
        clock.advance(days=2)
        ext(app).scheduler.tick()  # both due: each dispatches one job
    samples = scrape(app)
    assert value(samples, "indexnow_jobs", status="pending", queue="default") == 1
    assert value(samples, "indexnow_jobs", status="pending", queue="fast") == 1
    assert value(samples, "indexnow_jobs", status="failed", queue="fast") == 0
    by_handler = {r.handler: r.next_run for r in rows(app, "Schedule")}
    for handler, next_run in by_handler.items():
        assert value(samples, "indexnow_schedule_next_run_timestamp_seconds", schedule=handler) == next_run.timestamp()
    assert value(samples, "indexnow_check_ok", check="key") == 1
    assert value(samples, "indexnow_check_ok", check="dry_run") == 0  # INDEXNOW_DRY_RUN is a failing check
    # Every check of the status page, each 0/1, passing ones included (allowed_hosts: the tests' open list).
    assert checks_of(samples) == {"key": 1, "key_file": 1, "endpoint": 1, "allowed_hosts": 0, "cache": 1,
                                  "scheduler": 1, "dry_run": 0, "enabled": 1}
    with app.app_context():
        page = app.extensions["indexnow"]
        from flask_indexnow.checks import run_checks
        assert set(checks_of(samples)) == {c.name for c in run_checks(page, scheduler_active=True)}


def checks_of(samples: dict) -> dict[str, float]:
    return {dict(labels)["check"]: v for (name, labels), v in samples.items() if name == "indexnow_check_ok"}


def test_every_check_is_exported_passing_or_failing(make_app, endpoint, clock):
    """dry_run and enabled are there while they pass (1) and when they fail (0); robots with INDEXNOW_VERIFY."""
    sending = make_app(INDEXNOW_METRICS_TOKEN=TOKEN, INDEXNOW_ALLOWED_HOSTS=["example.com"], INDEXNOW_VERIFY="app")
    assert checks_of(scrape(sending)) == {"key": 1, "key_file": 1, "endpoint": 1, "allowed_hosts": 1, "cache": 1,
                                          "robots": 1, "scheduler": 0, "dry_run": 1, "enabled": 1}
    off = make_app(INDEXNOW_METRICS_TOKEN=TOKEN, INDEXNOW_ENABLED=False, INDEXNOW_DRY_RUN=True)
    found = checks_of(scrape(off))
    assert (found["enabled"], found["dry_run"]) == (0, 0)
    assert "robots" not in found  # only with INDEXNOW_VERIFY


def test_jobs_of_every_status_and_queue(make_app, endpoint, clock):
    """Each job status counted per queue, zeros included for a queue that has jobs (SPEC §13 indexnow_jobs)."""
    from datetime import timedelta

    from flask_indexnow.scheduling import jobs

    app = make_app(INDEXNOW_METRICS_TOKEN=TOKEN, INDEXNOW_DRY_RUN=True)
    state = app.extensions["indexnow"]
    with app.app_context():
        jobs.dispatch(state, "indexnow.prune_history", queue="fast")
        jobs.run_one(state, jobs.claim(state, ["fast"]))  # completed
        jobs.dispatch(state, "no.such.handler", queue="fast", max_attempts=1)
        jobs.run_one(state, jobs.claim(state, ["fast"]))  # failed: its only attempt
        jobs.dispatch(state, "indexnow.prune_history", queue="fast")
        assert jobs.claim(state, ["fast"]) is not None  # processing: claimed, still running
        jobs.dispatch(state, "indexnow.prune_history", queue="fast", expires_at=clock.now + timedelta(seconds=5))
        jobs.dispatch(state, "indexnow.prune_history", queue="fast")
        jobs.dispatch(state, "indexnow.prune_history", queue="fast")  # two pending
        clock.advance(10)
        assert jobs.expire_due(state) == 1  # expired: no worker started it in time
        jobs.dispatch(state, "indexnow.prune_history")  # one pending job on the default queue
    samples = scrape(app)
    found = {(dict(labels)["queue"], dict(labels)["status"]): v for (name, labels), v in samples.items()
             if name == "indexnow_jobs"}
    assert found == {
        ("fast", "pending"): 2, ("fast", "processing"): 1, ("fast", "completed"): 1, ("fast", "failed"): 1,
        ("fast", "expired"): 1,
        ("default", "pending"): 1, ("default", "processing"): 0, ("default", "completed"): 0,
        ("default", "failed"): 0, ("default", "expired"): 0,
    }


def test_the_last_outcome_is_the_newest_occurrence(make_app, endpoint, clock):
    """Two occurrences (dispatched by the tick, then triggered by hand): the metric shows the newer one."""
    app = make_app(INDEXNOW_METRICS_TOKEN=TOKEN)
    with app.app_context():
        ext(app).schedule("indexnow.prune_history", name="nightly").every("1 day").save()
        clock.advance(days=2)
        ext(app).scheduler.tick()
        clock.advance(60)
        ext(app).scheduler.trigger("nightly")
        history = [o.outcome for o in ext(app).scheduler.history("nightly")]
    assert history == ["triggered", "dispatched"]  # newest first
    outcomes = {dict(labels)["outcome"]: v for (name, labels), v in scrape(app).items()
                if name == "indexnow_schedule_last_outcome" and dict(labels)["schedule"] == "nightly"}
    assert outcomes == {"dispatched": 0, "skipped": 0, "missed": 0, "triggered": 1, "expired": 0}


def test_a_paused_schedule_has_no_next_run_but_keeps_its_last_outcome(make_app, endpoint, clock):
    app = make_app(INDEXNOW_METRICS_TOKEN=TOKEN)
    with app.app_context():
        ext(app).schedule("indexnow.prune_history", name="paused-one").every("1 day").save()
        ext(app).schedule("indexnow.process_queue", name="running-one").every("1 hour").save()
        clock.advance(days=2)
        ext(app).scheduler.tick()
        ext(app).scheduler.pause("paused-one")
    samples = scrape(app)
    next_runs = {dict(labels)["schedule"] for (name, labels) in samples
                 if name == "indexnow_schedule_next_run_timestamp_seconds"}
    assert next_runs == {"running-one"}  # a paused schedule does not run next: no time is exported for it
    assert value(samples, "indexnow_schedule_last_outcome", schedule="paused-one", outcome="dispatched") == 1


def test_labels_are_bounded(make_app, endpoint, clock):
    """No URL and no host in any label: a million URLs make no more series than one."""
    app = make_app(INDEXNOW_METRICS_TOKEN=TOKEN, INDEXNOW_MAX_ATTEMPTS=1)
    endpoint.answer(400)
    deliver(app, *(f"https://host{n}.example/page{n}" for n in range(5)))
    samples = scrape(app)
    labels = {label for _, pairs in samples for pair in pairs for label in pair}
    assert not [text for text in labels if "host" in text and "example" in text]
    assert value(samples, "indexnow_deliveries_total", status="failed", engine=endpoint.url) == 5


def test_named_schedules_and_their_last_outcome(make_app, endpoint, clock):
    app = make_app(INDEXNOW_METRICS_TOKEN=TOKEN)
    with app.app_context():
        ext(app).schedule("indexnow.prune_history", name="nightly-prune").every("1 day").save()
        clock.advance(days=2)
        ext(app).scheduler.tick()
    samples = scrape(app)
    next_run = {r.name: r.next_run for r in rows(app, "Schedule")}["nightly-prune"]
    assert value(samples, "indexnow_schedule_next_run_timestamp_seconds", schedule="nightly-prune") == next_run.timestamp()
    outcomes = {dict(labels)["outcome"]: v for (name, labels), v in samples.items()
                if name == "indexnow_schedule_last_outcome" and dict(labels)["schedule"] == "nightly-prune"}
    with app.app_context():
        history = ext(app).scheduler.history("nightly-prune")
    assert history  # the tick wrote an occurrence
    assert outcomes == {o: float(o == history[0].outcome) for o in
                        ("dispatched", "skipped", "missed", "triggered", "expired")}
