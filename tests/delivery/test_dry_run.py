"""INDEXNOW_DRY_RUN: everything runs, nothing is POSTed, history says dry_run (SPEC §11)."""

from __future__ import annotations

from flask_indexnow import signals

from .conftest import closed_port, ext, history_rows, queue_rows


def test_dry_run_posts_nothing_and_drains_the_queue(make_app, endpoint, clock, caplog):
    app = make_app(INDEXNOW_DRY_RUN=True)
    sent: list[dict] = []

    def on_sent(sender, **kwargs):
        sent.append({"sender": sender, **kwargs})

    with signals.batch_sent.connected_to(on_sent), app.app_context():
        ext(app).enqueue_many(["https://example.com/a", "https://example.com/b"])
        ext(app).enqueue("https://other.org/c", "delete")
        caplog.set_level("INFO", logger="flask_indexnow")
        result = ext(app).process_queue()
    assert endpoint.received == []
    assert queue_rows(app) == []
    assert (result.claimed, result.dry_run, result.succeeded, result.failed, result.requests) == (3, 3, 0, 0, 0)
    assert "dry run 3" in str(result)
    history = history_rows(app)
    assert sorted((h.url, h.action, h.status, h.http_status) for h in history) == [
        ("https://example.com/a", "update", "dry_run", None),
        ("https://example.com/b", "update", "dry_run", None),
        ("https://other.org/c", "delete", "dry_run", None),
    ]
    assert sorted((s["host"], tuple(s["urls"]), s["status"]) for s in sent) == [
        ("example.com", ("https://example.com/a", "https://example.com/b"), None),
        ("other.org", ("https://other.org/c",), None),
    ]
    assert all(s["sender"] is app for s in sent)
    assert f"dry run host=example.com endpoint={endpoint.url} count=2" in caplog.text


def test_dry_run_never_contacts_the_endpoint(make_app, endpoint, clock):
    """Even a dead endpoint does not matter: no connection is made."""
    app = make_app(INDEXNOW_DRY_RUN=True, INDEXNOW_ENDPOINT=f"http://127.0.0.1:{closed_port()}/indexnow")
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
        assert ext(app).process_queue().dry_run == 1
    assert [h.status for h in history_rows(app)] == ["dry_run"]


def test_dry_run_does_not_record_deliveries_in_the_ledger(make_app, endpoint, clock):
    """A dry run must not make the real run think the URL was already submitted."""
    dry = make_app(INDEXNOW_DRY_RUN=True, INDEXNOW_RESUBMIT_INTERVAL=3600)
    with dry.app_context():
        ext(dry).enqueue("https://example.com/a")
        ext(dry).process_queue()
    assert [h.status for h in history_rows(dry)] == ["dry_run"]
    from ..conftest import rows
    assert rows(dry, "URLState") == []
    real = make_app(create_tables=False, INDEXNOW_RESUBMIT_INTERVAL=3600)
    with real.app_context():
        ext(real).enqueue("https://example.com/a")
        [row] = queue_rows(real)
        assert row["available_at"] == clock.now  # not held back by the dry run
        assert ext(real).process_queue().succeeded == 1
    assert endpoint.urls_received() == ["https://example.com/a"]
