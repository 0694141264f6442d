"""Submit only real changes: fingerprints and INDEXNOW_RESUBMIT_INTERVAL (SPEC §11)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import pytest

from flask_indexnow import signals

from ..conftest import rows
from ..endpoint_server import Reply
from .conftest import ext, queue_rows

pytestmark = pytest.mark.every_backend  # the ledger's set-based writes differ by database

INTERVAL = 3600


@dataclass
class Page:
    slug: str
    body: str
    published: bool = True


def _watch(app) -> None:
    ext(app).watch(Page, url=lambda p: f"https://example.com/{p.slug}", published=lambda p: p.published,
                   fingerprint=lambda p: p.body)


def _save(app, page: Page) -> None:
    signals.resource_saved.send(app, resource=page)


def test_unchanged_content_after_a_success_queues_nothing(make_app, endpoint, clock):
    app = make_app()
    _watch(app)
    page = Page("a", "v1")
    queued: list[list[str]] = []
    with signals.url_enqueued.connected_to(lambda sender, **kw: queued.append(kw["urls"])), app.app_context():
        _save(app, page)
        assert ext(app).process_queue().succeeded == 1
        [ledger] = rows(app, "URLState")
        assert (ledger.url, ledger.host, ledger.last_success_at) == ("https://example.com/a", "example.com", clock.now)
        assert ledger.fingerprint
        _save(app, page)  # same content
        assert queue_rows(app) == []
        page.body = "v2"
        _save(app, page)
        [row] = queue_rows(app)
        assert (row["action"], row["status"]) == ("update", "pending")
        clock.advance(60)
        ext(app).process_queue()
        page.body = "v1"  # back to the first version: differs from the last delivered one (v2)
        _save(app, page)
        assert len(queue_rows(app)) == 1
    assert queued == [["https://example.com/a"]] * 3
    assert endpoint.urls_received() == ["https://example.com/a"] * 2


def test_an_open_row_is_still_overwritten(make_app, endpoint, clock):
    """Delivered v1, then unpublished (delete pending), then republished unchanged: back to update."""
    app = make_app()
    _watch(app)
    page = Page("a", "v1")
    with app.app_context():
        _save(app, page)
        ext(app).process_queue()
        page.published = False
        _save(app, page)
        [row] = queue_rows(app)
        assert row["action"] == "delete"
        page.published = True
        _save(app, page)
        [after] = queue_rows(app)
    assert (after["id"], after["action"], after["status"]) == (row["id"], "update", "pending")


def test_a_delivered_delete_forgets_the_fingerprint(make_app, endpoint, clock):
    app = make_app()
    _watch(app)
    page = Page("a", "v1")
    with app.app_context():
        _save(app, page)
        ext(app).process_queue()
        page.published = False
        _save(app, page)
        ext(app).process_queue()
        page.published = True
        _save(app, page)  # the engine was told it is gone: the same content must be sent again
        [row] = queue_rows(app)
    assert row["action"] == "update"


def test_a_failed_delivery_does_not_record_the_fingerprint(make_app, endpoint, clock):
    endpoint.script(Reply(403))
    app = make_app()
    _watch(app)
    page = Page("a", "v1")
    with app.app_context():
        _save(app, page)
        ext(app).process_queue()
        [failed] = queue_rows(app)
        assert failed["status"] == "failed"
        assert rows(app, "URLState") == []
        _save(app, page)  # same content, never delivered: replaces the failed row
        [row] = queue_rows(app)
    assert (row["id"], row["status"], row["attempts"]) == (failed["id"], "pending", 0)


def test_without_a_fingerprint_every_save_queues(make_app, endpoint, clock):
    app = make_app()
    ext(app).watch(Page, url=lambda p: f"https://example.com/{p.slug}")
    page = Page("a", "v1")
    with app.app_context():
        _save(app, page)
        ext(app).process_queue()
        _save(app, page)
        assert len(queue_rows(app)) == 1
    assert rows(app, "URLState") == []  # no ledger needed at all


def test_resubmit_interval_holds_back_an_early_update(make_app, endpoint, clock):
    app = make_app(INDEXNOW_RESUBMIT_INTERVAL=INTERVAL)
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
        delivered_at = clock.now
        ext(app).process_queue()
        clock.advance(600)
        ext(app).enqueue("https://example.com/a")
        [row] = queue_rows(app)
        assert row["available_at"] == delivered_at + timedelta(seconds=INTERVAL)
        assert ext(app).process_queue().claimed == 0
        clock.set(delivered_at + timedelta(seconds=INTERVAL))
        assert ext(app).process_queue().succeeded == 1
    assert endpoint.urls_received() == ["https://example.com/a"] * 2


def test_resubmit_interval_never_holds_back_a_delete(make_app, endpoint, clock):
    app = make_app(INDEXNOW_RESUBMIT_INTERVAL=INTERVAL)
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
        ext(app).process_queue()
        clock.advance(10)
        ext(app).enqueue("https://example.com/a", "delete")
        [row] = queue_rows(app)
        assert row["available_at"] == clock.now
        assert ext(app).process_queue().succeeded == 1


@pytest.mark.parametrize("since", [INTERVAL, INTERVAL + 1, 10 * INTERVAL])
def test_resubmit_interval_passed(make_app, endpoint, clock, since):
    app = make_app(INDEXNOW_RESUBMIT_INTERVAL=INTERVAL)
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
        ext(app).process_queue()
        clock.advance(since)
        ext(app).enqueue("https://example.com/a")
        [row] = queue_rows(app)
    assert row["available_at"] == clock.now


def test_resubmit_interval_applies_to_bulk_and_keeps_later_publication_dates(make_app, endpoint, clock):
    app = make_app(INDEXNOW_RESUBMIT_INTERVAL=INTERVAL)
    with app.app_context():
        ext(app).enqueue_many(["https://example.com/a", "https://example.com/b"])
        start = clock.now
        ext(app).process_queue()
        clock.advance(60)
        ext(app).enqueue_many(["https://example.com/a", "https://example.com/new"])
        ext(app).enqueue("https://example.com/b", available_at=start + timedelta(hours=5))
        due = {row["url"]: row["available_at"] for row in queue_rows(app)}
    assert due == {
        "https://example.com/a": start + timedelta(seconds=INTERVAL),  # delivered a minute ago
        "https://example.com/new": clock.now,                          # never delivered
        "https://example.com/b": start + timedelta(hours=5),           # its own date is later
    }


def test_resubmit_interval_records_each_success(make_app, endpoint, clock):
    app = make_app(INDEXNOW_RESUBMIT_INTERVAL=INTERVAL)
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
        ext(app).process_queue()
        clock.advance(2 * INTERVAL)
        ext(app).enqueue("https://example.com/a")
        ext(app).process_queue()
    [ledger] = rows(app, "URLState")
    assert ledger.last_success_at == clock.now


def test_a_delivery_without_fingerprint_forgets_the_old_one(make_app, endpoint, clock):
    """A direct enqueue carries no fingerprint: what the engine last saw is unknown, so the next save is sent."""
    app = make_app()
    _watch(app)
    page = Page("a", "v1")
    with app.app_context():
        _save(app, page)
        ext(app).process_queue()
        ext(app).enqueue("https://example.com/a")
        ext(app).process_queue()
        [ledger] = rows(app, "URLState")
        assert ledger.fingerprint is None
        _save(app, page)
        assert len(queue_rows(app)) == 1


def test_fingerprints_of_many_urls_in_one_batch(make_app, endpoint, clock):
    app = make_app()
    _watch(app)
    pages = [Page(f"p{i}", f"body {i}") for i in range(30)]
    with app.app_context():
        for page in pages:
            _save(app, page)
        assert ext(app).process_queue().succeeded == 30
        assert len(rows(app, "URLState")) == 30
        for page in pages:
            page.body = page.body if int(page.slug[1:]) % 3 else "changed"
            _save(app, page)
        assert sorted(row["url"] for row in queue_rows(app)) == sorted(
            f"https://example.com/p{i}" for i in range(30) if i % 3 == 0
        )
