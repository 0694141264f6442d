"""retry_failed, replacing a failed row, and enqueue_many's dedup and rejections (SPEC §3, §4, §11)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from flask_indexnow import queue

from ..endpoint_server import Reply
from .conftest import ext, history_rows, queue_rows, state_of

pytestmark = pytest.mark.every_backend  # each database has its own upsert


def _fail(app, endpoint, *urls: str) -> None:
    endpoint.default = Reply(400, body=b"no")
    with app.app_context():
        ext(app).enqueue_many(list(urls))
        ext(app).process_queue()
    endpoint.default = Reply(200)


def test_retry_failed_puts_failed_rows_back_with_fresh_attempts(make_app, endpoint, clock):
    app = make_app()
    _fail(app, endpoint, "https://example.com/a", "https://example.com/b")
    with app.app_context():
        ext(app).enqueue("https://example.com/later", available_at=clock.now + timedelta(hours=1))
        waiting = queue_rows(app, url="https://example.com/later")
        clock.advance(30)
        assert ext(app).retry_failed() == 2
        rows = {row["url"]: row for row in queue_rows(app)}
        for url in ("https://example.com/a", "https://example.com/b"):
            row = rows[url]
            assert (row["status"], row["attempts"], row["available_at"]) == ("pending", 0, clock.now)
            assert (row["last_error"], row["last_http_status"], row["claim_token"]) == (None, None, None)
        assert queue_rows(app, url="https://example.com/later") == waiting
        assert ext(app).retry_failed() == 0
        assert ext(app).process_queue().succeeded == 2
    assert [row["url"] for row in queue_rows(app)] == ["https://example.com/later"]


def test_a_new_event_replaces_the_failed_row(make_app, endpoint, clock):
    app = make_app()
    _fail(app, endpoint, "https://example.com/a")
    [failed] = queue_rows(app)
    assert (failed["status"], failed["attempts"]) == ("failed", 1)
    with app.app_context():
        clock.advance(5)
        ext(app).enqueue("https://example.com/a", "delete")
        [row] = queue_rows(app)
        assert (row["id"], row["status"], row["attempts"], row["action"]) == (failed["id"], "pending", 0, "delete")
        assert (row["last_error"], row["last_http_status"], row["updated_at"]) == (None, None, clock.now)
        assert ext(app).process_queue().succeeded == 1
    assert [h.status for h in history_rows(app)] == ["failed", "success"]


def test_enqueue_many_dedups_within_one_call(make_app, endpoint, clock):
    app = make_app()
    with app.app_context():
        result = ext(app).enqueue_many([
            "https://example.com/a", "https://example.com/a#section", "https://EXAMPLE.com/a",
            "https://example.com/b", "https://example.com/a",
        ])
        assert (result.queued, result.unchanged, result.rejected) == (2, 0, [])
        assert sorted(row["url"] for row in queue_rows(app)) == ["https://example.com/a", "https://example.com/b"]


def test_write_entries_last_event_wins_within_one_call(make_app, endpoint, clock):
    app = make_app()
    with app.app_context():
        state = state_of(app)
        entries = [
            queue.make_entry(state, "https://example.com/a", "update"),
            queue.make_entry(state, "https://example.com/b", "delete"),
            queue.make_entry(state, "https://example.com/a", "delete"),
            queue.make_entry(state, "https://example.com/b", "update"),
        ]
        with state.engine().begin() as connection:
            written = queue.write_entries(state, connection, entries)
    assert sorted((e.url, e.action) for e in written) == [("https://example.com/a", "delete"),
                                                          ("https://example.com/b", "update")]
    assert sorted((r["url"], r["action"]) for r in queue_rows(app)) == [("https://example.com/a", "delete"),
                                                                        ("https://example.com/b", "update")]


def test_enqueue_many_reports_rejected_urls_and_queues_the_rest(make_app, endpoint, clock):
    app = make_app()
    with app.app_context():
        result = ext(app).enqueue_many([
            "https://example.com/ok", "ftp://example.com/x", "http://localhost/", "https://10.0.0.1/",
            "https://user:pw@example.com/", 42, None, "", "https://example.com/ok2",
        ])
    assert result.queued == 2
    assert [url for url, _reason in result.rejected] == [
        "ftp://example.com/x", "http://localhost/", "https://10.0.0.1/", "https://user:pw@example.com/",
        "42", "None", "",
    ]
    assert all(reason for _url, reason in result.rejected)
    assert sorted(row["url"] for row in queue_rows(app)) == ["https://example.com/ok", "https://example.com/ok2"]


def test_enqueue_many_with_nothing_valid_writes_nothing(make_app, endpoint, clock):
    app = make_app()
    with app.app_context():
        result = ext(app).enqueue_many(["nope", "http://localhost/"])
    assert (result.queued, len(result.rejected)) == (0, 2)
    assert queue_rows(app) == []


def test_enqueue_many_counts_unchanged_fingerprints_and_resubmits(make_app, endpoint, clock):
    """``unchanged`` counts URLs the ledger skipped; bulk URLs carry no fingerprint, so none are."""
    app = make_app(INDEXNOW_RESUBMIT_INTERVAL=60)
    with app.app_context():
        ext(app).enqueue_many(["https://example.com/a"])
        ext(app).process_queue()
        result = ext(app).enqueue_many(["https://example.com/a", "https://example.com/b"])
    assert (result.queued, result.unchanged) == (2, 0)
