"""Queue counts that stop at EXACT_LIMIT rows: exact below it, an estimate above (SQLite: test_estimate.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest
import sqlalchemy as sa

from flask_indexnow import clock as clock_module
from flask_indexnow.metrics import counts
from flask_indexnow.models import url_hash

from .helpers import TOKEN, scrape, value


def fill(app, n: int, status: str = "pending", *, engine: str = "", due_in: float = 3600) -> None:
    """``n`` queue rows written straight into the table (in one statement), then ANALYZE where there is one."""
    state = app.extensions["indexnow"]
    queue = state.models.queue
    now = clock_module.utcnow()
    urls = [f"https://example.com/{status}/{engine}/{due_in}/{i}" for i in range(n)]
    rows = [{"host": "example.com", "url": url, "url_hash": url_hash(url), "engine": engine, "action": "update", "status": status,
             "attempts": 0, "available_at": now + timedelta(seconds=due_in), "created_at": now,
             "updated_at": now} for url in urls]
    with app.app_context():
        with state.engine().begin() as connection:
            connection.execute(sa.insert(queue), rows)
        if state.engine().dialect.name == "postgresql":
            with state.engine().connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
                connection.execute(sa.text(f'ANALYZE "{queue.name}"'))


@pytest.mark.every_backend  # the estimate is each database's own
def test_counts_are_exact_below_the_limit_and_estimated_above(make_app, endpoint, backend, monkeypatch):
    monkeypatch.setattr(counts, "EXACT_LIMIT", 50)
    app = make_app(INDEXNOW_METRICS_TOKEN=TOKEN)
    fill(app, 300)
    fill(app, 20, "failed")
    fill(app, 3, "processing")
    samples = scrape(app)
    pending = value(samples, "indexnow_queue_urls", status="pending", engine=endpoint.url)
    if backend == "sqlite":
        assert pending == 300  # an id range narrower than the sample is read whole: exact
    else:
        assert 51 <= pending <= 600  # the planner's figure, never below the limit it passed
    assert value(samples, "indexnow_queue_urls", status="failed", engine=endpoint.url) == 20
    assert value(samples, "indexnow_queue_urls", status="processing", engine=endpoint.url) == 3


def test_rows_of_an_engine_no_longer_configured_are_not_counted(make_app, endpoint):
    app = make_app(INDEXNOW_METRICS_TOKEN=TOKEN)
    fill(app, 4)
    fill(app, 2, engine=endpoint.url)  # written while INDEXNOW_ENDPOINTS named it: still this engine's
    fill(app, 5, engine="https://gone.example/indexnow")
    samples = scrape(app)
    assert value(samples, "indexnow_queue_urls", status="pending", engine=endpoint.url) == 6
    assert not [labels for name, labels in samples if "https://gone.example/indexnow" in dict(labels).values()]


def test_oldest_due_age_counts_only_due_pending_rows(make_app, endpoint, clock):
    app = make_app(INDEXNOW_METRICS_TOKEN=TOKEN)
    fill(app, 3, due_in=-42)
    fill(app, 2, "failed", due_in=-4000)  # failed rows are not waiting to be sent
    fill(app, 2, due_in=600)
    assert value(scrape(app), "indexnow_queue_oldest_due_age_seconds", engine=endpoint.url) == 42


def test_inbox_rows_are_counted_for_every_engine(make_app):
    """Events still waiting in the inbox (written in the site's transaction) are counted, once per engine."""
    from tests.endpoint_server import EndpointServer

    with EndpointServer() as one, EndpointServer() as two:
        app = make_app(INDEXNOW_METRICS_TOKEN=TOKEN, INDEXNOW_ENDPOINTS=[one.url, two.url])
        with app.app_context():
            ext = app.extensions["indexnow"].extension
            db = app.extensions["indexnow_test_db"]
            ext.enqueue("https://example.com/a", commit=False)
            ext.enqueue("https://example.com/b", commit=False)
            db.session.commit()
        samples = scrape(app)
        for engine in (one.url, two.url):
            assert value(samples, "indexnow_queue_urls", status="inbox", engine=engine) == 2
            assert value(samples, "indexnow_queue_urls", status="pending", engine=engine) == 0


def test_a_dead_worker_shows_in_the_inbox_and_the_oldest_due_age(make_app, endpoint, clock):
    """No pass runs: events pile up in the inbox while ``pending`` stays 0; their age is the oldest due age."""
    app = make_app(INDEXNOW_METRICS_TOKEN=TOKEN)
    with app.app_context():
        ext = app.extensions["indexnow"].extension
        db = app.extensions["indexnow_test_db"]
        ext.enqueue("https://example.com/first", commit=False)
        db.session.commit()
        clock.advance(600)
        ext.enqueue("https://example.com/second", commit=False)
        db.session.commit()
    clock.advance(400)
    samples = scrape(app)
    assert value(samples, "indexnow_queue_urls", status="pending", engine=endpoint.url) == 0
    assert value(samples, "indexnow_queue_urls", status="inbox", engine=endpoint.url) == 2
    # The first event was written 1,000 s ago: past the alert rule's 900 s (docs/monitoring.md).
    assert value(samples, "indexnow_queue_oldest_due_age_seconds", engine=endpoint.url) == 1000
    with app.app_context():
        ext.process_queue()  # merged and sent: nothing waits any more
    samples = scrape(app)
    assert value(samples, "indexnow_queue_urls", status="inbox", engine=endpoint.url) == 0
    assert value(samples, "indexnow_queue_oldest_due_age_seconds", engine=endpoint.url) == 0
