"""Issue 18: rows queued inside the site's transaction wait in the inbox; each pass merges them first.

The merge keeps every queue rule: the last event wins (in inbox order), an event
for a row being delivered takes its claim away, publication dates, fingerprints,
the resubmit interval, several engines, a retry's wait. Merges from several
threads at once never merge an event twice, lose one, or let an older one win.
"""

from __future__ import annotations

import logging
import threading
import uuid
from datetime import timedelta

import pytest
import sqlalchemy as sa

from flask_indexnow import clock as clock_module
from flask_indexnow import due, queue
from flask_indexnow.delivery.merge import merge_inbox
from flask_indexnow.explain import explain_url
from flask_indexnow.models import url_hash
from flask_indexnow.stats import queue_counts
from flask_indexnow.status.engines import engine_rows
from flask_indexnow.testing import queued_urls

from ..conftest import RUN_PREFIX
from ..endpoint_server import Reply
from .conftest import ext, history_rows, queue_rows, state_of

URL = "https://example.com/page"


def in_transaction(app, url: str = URL, action: str = "update", **kwargs) -> None:
    """Queue ``url`` inside the site's own transaction (as a watched save does), then commit it."""
    with app.app_context():
        queue.enqueue(state_of(app), url, action, commit=False, **kwargs)
        state_of(app).db.session.commit()


def table_rows(app, name: str) -> list:
    """Rows of one table as stored, without merging anything first."""
    state = state_of(app)
    table = getattr(state.models, name)
    with app.app_context(), state.engine().connect() as connection:
        return list(connection.execute(sa.select(table).order_by(table.c.id)))


@pytest.mark.every_backend  # the inbox insert and the merge's SQL differ by database
def test_a_write_in_the_site_transaction_goes_to_the_inbox_and_the_pass_merges_it(make_app, endpoint):
    app = make_app()
    in_transaction(app, URL, "update")
    in_transaction(app, "https://example.com/other", "delete")
    assert table_rows(app, "queue") == []
    assert [(r.url, r.action) for r in table_rows(app, "inbox")] == [
        (URL, "update"), ("https://example.com/other", "delete")]
    with app.app_context():
        result = ext(app).process_queue()
    assert result.succeeded == 2
    assert table_rows(app, "inbox") == [] and table_rows(app, "queue") == []
    assert sorted((h.url, h.action) for h in history_rows(app)) == [
        ("https://example.com/other", "delete"), (URL, "update")]


@pytest.mark.every_backend
def test_the_last_event_wins_in_inbox_order(make_app):
    app = make_app()
    for action in ("update", "delete", "update", "delete"):
        in_transaction(app, URL, action)
    in_transaction(app, "https://example.com/b", "delete")
    in_transaction(app, "https://example.com/b", "update")
    with app.app_context():
        assert ext(app).merge_inbox() == 6
    assert sorted((r["url"], r["action"], r["status"]) for r in queue_rows(app)) == [
        ("https://example.com/b", "update", "pending"), (URL, "delete", "pending")]


def test_a_merged_event_replaces_an_open_row_and_a_failed_one(make_app):
    app = make_app()
    with app.app_context():
        ext(app).enqueue(URL, "update")
        ext(app).enqueue("https://example.com/failed")
        state = state_of(app)
        with state.engine().begin() as connection:
            queue = state.models.queue
            connection.execute(sa.update(queue).where(queue.c.url == "https://example.com/failed")
                               .values(status="failed", attempts=3, last_error="HTTP 400"))
    in_transaction(app, URL, "delete")
    in_transaction(app, "https://example.com/failed", "update")
    rows = {r["url"]: r for r in queue_rows(app)}
    assert len(rows) == 2  # no second row for either URL
    assert (rows[URL]["action"], rows[URL]["status"]) == ("delete", "pending")
    failed = rows["https://example.com/failed"]
    assert (failed["status"], failed["attempts"], failed["last_error"]) == ("pending", 0, None)


def test_a_future_publication_date_is_kept(make_app, clock):
    app = make_app()
    later = clock() + timedelta(hours=3)
    in_transaction(app, URL, available_at=later)
    [row] = queue_rows(app)
    assert clock_module.as_utc(row["available_at"]) == later
    with app.app_context():
        assert ext(app).process_queue().claimed == 0  # not due yet


def test_a_waiting_retry_is_not_made_due_earlier(make_app, clock):
    app = make_app()
    with app.app_context():
        ext(app).enqueue(URL)
        state = state_of(app)
        queue = state.models.queue
        retry_at = clock() + timedelta(minutes=10)
        with state.engine().begin() as connection:
            connection.execute(sa.update(queue).values(attempts=1, available_at=retry_at))
    in_transaction(app, URL, "update")
    [row] = queue_rows(app)
    assert (row["attempts"], clock_module.as_utc(row["available_at"])) == (1, retry_at)


def test_fingerprints_and_the_resubmit_interval_are_read_at_the_merge(make_app, clock):
    app = make_app(INDEXNOW_RESUBMIT_INTERVAL=3600)
    state = state_of(app)
    ledger = state.models.url_state
    delivered_at = clock() - timedelta(minutes=10)
    with app.app_context(), state.engine().begin() as connection:
        connection.execute(sa.insert(ledger), [
            {"host": "example.com", "url": URL, "url_hash": url_hash(URL), "fingerprint": "same",
             "last_success_at": delivered_at},
            {"host": "example.com", "url": URL + "2", "url_hash": url_hash(URL + "2"), "fingerprint": "old",
             "last_success_at": delivered_at},
        ])
    in_transaction(app, URL, fingerprint="same")  # unchanged since its delivery: dropped by the merge
    in_transaction(app, URL + "2", fingerprint="new")  # changed, but held back by the interval
    [row] = queue_rows(app)
    assert row["url"] == URL + "2"
    assert clock_module.as_utc(row["available_at"]) == delivered_at + timedelta(hours=1)
    assert table_rows(app, "inbox") == []


def test_several_engines_get_a_row_each(make_app):
    engines = ("http://127.0.0.1:9/a", "http://127.0.0.1:9/b")
    app = make_app(INDEXNOW_ENDPOINTS=engines)
    in_transaction(app, URL)
    assert sorted(r["engine"] for r in queue_rows(app)) == sorted(engines)


@pytest.mark.every_backend
def test_an_event_merged_while_its_row_is_being_delivered_is_not_lost(make_app, endpoint):
    app = make_app()
    calls: list[int] = []

    def decide(request):
        if not calls:  # a save during the POST, and another pass's merge, before the answer
            in_transaction(app, URL, "delete")
            with app.app_context():
                ext(app).merge_inbox()
        calls.append(1)
        return Reply(200)

    endpoint.decide = decide
    with app.app_context():
        ext(app).enqueue(URL, "update")
        first = ext(app).process_queue()
    assert first.claimed == 1
    [row] = queue_rows(app)
    assert (row["action"], row["status"], row["claim_token"]) == ("delete", "pending", None)
    with app.app_context():
        assert ext(app).process_queue().succeeded == 1
    assert [h.action for h in history_rows(app)] == ["update", "delete"]


def test_an_event_saved_during_a_delivery_is_sent_after_it(make_app, endpoint):
    app = make_app()
    calls: list[int] = []

    def decide(request):
        if not calls:
            in_transaction(app, URL, "delete")  # waits in the inbox while the POST is answered
        calls.append(1)
        return Reply(200)

    endpoint.decide = decide
    with app.app_context():
        ext(app).enqueue(URL, "update")
        assert ext(app).process_queue().succeeded == 1
        assert ext(app).process_queue().succeeded == 1
    assert [h.action for h in history_rows(app)] == ["update", "delete"]


@pytest.mark.parametrize("backend", ["postgresql", "mariadb"])
def test_concurrent_merges_take_each_event_once_and_keep_the_order(make_app):
    """Four threads merge at once, a few events per transaction: never one twice, none lost, the last one wins."""
    app = make_app()
    state = state_of(app)
    urls = [f"https://example.com/p{n}" for n in range(40)]
    events = [(url, ("update", "delete")[(n + k) % 2]) for k in range(6) for n, url in enumerate(urls)]
    with app.app_context(), state.engine().begin() as connection:
        connection.execute(sa.insert(state.models.inbox), [
            {"host": "example.com", "url": url, "action": action, "available_at": clock_module.utcnow()}
            for url, action in events
        ])
    merged: list[int] = []
    start = threading.Barrier(4)

    def merge() -> None:
        with app.app_context():
            start.wait()
            for _ in range(20):
                merged.append(merge_inbox(state, state.engine(), rows=7, rounds=1))

    threads = [threading.Thread(target=merge) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(merged) == len(events)
    assert table_rows(app, "inbox") == []
    last = dict(events)  # each URL's last event
    assert {r["url"]: r["action"] for r in queue_rows(app)} == last


def test_counts_explain_and_the_next_due_time_include_the_inbox(make_app, clock):
    app = make_app()
    in_transaction(app, URL)
    in_transaction(app, URL + "2", available_at=clock() + timedelta(hours=1))
    state = state_of(app)
    with app.app_context():
        with state.engine().connect() as connection:
            counts = queue_counts(state, connection)
            [engine] = engine_rows(state, connection)
            assert due.next_due(state, connection) == clock().timestamp()
        story = explain_url(state, URL)
    assert (counts["inbox"], counts["pending"], counts["due_now"], counts["waiting"], counts["total"]) == (
        2, 2, 1, 1, 2)
    assert engine["pending"] == 2
    assert story.known and [e["action"] for e in story.inbox] == ["update"]
    assert any(line.startswith("Inbox: 1 event(s)") for line in story.story)
    assert queued_urls(app) == [URL, URL + "2"]  # the testing helpers see them (merged first)


def test_a_database_without_the_inbox_table_still_delivers_the_queue(make_app, endpoint, caplog):
    """Upgraded without `flask indexnow init-db`: the pass says what is missing, and delivers the rest."""
    app = make_app()
    state = state_of(app)
    with app.app_context():
        ext(app).enqueue(URL)
        state.models.inbox.drop(state.engine())
        try:
            with caplog.at_level(logging.ERROR, logger="flask_indexnow"):
                assert ext(app).process_queue().succeeded == 1
        finally:
            state.models.inbox.create(state.engine())
    assert any("inbox cannot be merged" in r.getMessage() and "init-db" in r.getMessage() for r in caplog.records)


@pytest.mark.every_backend  # case folding of unquoted names is each database's own rule
def test_the_inbox_works_under_a_mixed_case_table_prefix(make_app, endpoint):
    prefix = f"Site{uuid.uuid4().hex[:4]}_{RUN_PREFIX}"
    app = make_app(create_tables=False, INDEXNOW_TABLE_PREFIX=prefix)
    assert app.test_cli_runner().invoke(args=["indexnow", "init-db"]).exit_code == 0
    in_transaction(app, URL)
    assert [r.url for r in table_rows(app, "inbox")] == [URL]
    with app.app_context():
        assert ext(app).process_queue().succeeded == 1
    assert table_rows(app, "inbox") == [] and table_rows(app, "queue") == []
