"""SPEC §3: the CMS event signals and what each queues."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest
from flask import Flask

from flask_indexnow import IndexNow, signals

from ..conftest import RUN_PREFIX, rows


def only_row(app: Flask):
    found = rows(app)
    assert len(found) == 1, found
    return found[0]


def test_saved_published_queues_update(app: Flask) -> None:
    signals.resource_saved.send(app, url="https://example.com/a", published=True)
    row = only_row(app)
    assert (row.url, row.action, row.status, row.host) == ("https://example.com/a", "update", "pending", "example.com")


def test_saved_unpublished_queues_delete(app: Flask) -> None:
    signals.resource_saved.send(app, url="https://example.com/a", published=False)
    assert only_row(app).action == "delete"


def test_saved_deleted_flag_queues_delete(app: Flask) -> None:
    signals.resource_saved.send(app, url="https://example.com/a", published=True, deleted=True)
    assert only_row(app).action == "delete"


def test_published_and_unpublished(app: Flask) -> None:
    signals.resource_published.send(app, url="https://example.com/a")
    first = only_row(app)
    assert first.action == "update"
    signals.resource_unpublished.send(app, url="https://example.com/a")
    second = only_row(app)
    assert (second.id, second.action) == (first.id, "delete")
    signals.resource_published.send(app, url="https://example.com/a")
    third = only_row(app)
    assert (third.id, third.action) == (first.id, "update")  # last event wins, same row


@pytest.mark.every_backend  # stored datetimes differ by database
def test_future_publication_waits(app: Flask, clock) -> None:
    later = clock.now + timedelta(days=2)
    signals.resource_published.send(app, url="https://example.com/a", published_at=later)
    assert only_row(app).available_at == later


@pytest.mark.every_backend  # stored datetimes differ by database
def test_naive_published_at_is_utc(app: Flask, clock) -> None:
    later = clock.now + timedelta(hours=5)
    signals.resource_published.send(app, url="https://example.com/a", published_at=later.replace(tzinfo=None))
    assert only_row(app).available_at == later


def test_past_publication_is_due_now(app: Flask, clock) -> None:
    signals.resource_published.send(app, url="https://example.com/a", published_at=clock.now - timedelta(days=3))
    assert only_row(app).available_at == clock.now


def test_before_delete_then_deleted(app: Flask) -> None:
    ext: IndexNow = app.extensions["indexnow"].extension

    class Doc:
        def __init__(self, slug: str) -> None:
            self.slug = slug

    ext.watch(Doc, url=lambda d: f"https://example.com/{d.slug}")
    doc = Doc("gone")
    signals.resource_before_delete.send(app, resource=doc)
    doc.slug = "renamed-after-delete"  # the remembered URL is what counts
    signals.resource_deleted.send(app, resource=doc)
    row = only_row(app)
    assert (row.url, row.action) == ("https://example.com/gone", "delete")


def test_deleted_with_explicit_url(app: Flask) -> None:
    signals.resource_deleted.send(app, url="https://example.com/x")
    assert only_row(app).action == "delete"


def test_watched_resource_supplies_url_and_state(app: Flask, clock) -> None:
    ext: IndexNow = app.extensions["indexnow"].extension

    class Article:
        slug = "hello"
        live = True
        when = None

    ext.watch(Article, url=lambda a: f"https://example.com/blog/{a.slug}", published=lambda a: a.live,
              published_at=lambda a: a.when)
    article = Article()
    signals.resource_saved.send(app, resource=article)
    assert only_row(app).action == "update"
    article.live = False
    signals.resource_saved.send(app, resource=article)
    assert only_row(app).action == "delete"


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"url": 42},
        {"url": "https://example.com/a", "published": "yes"},
        {"url": "https://example.com/a", "published_at": "tomorrow"},
        {"url": "http://localhost/a"},
        {"url": "javascript:alert(1)"},
        {"resource": object()},
    ],
)
# Checking a signal's arguments is Python, before any query: SQLite is enough.
def test_odd_arguments_are_logged_and_skipped(app: Flask, kwargs: dict, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="flask_indexnow"):
        signals.resource_saved.send(app, **kwargs)  # never raises into the sender
    assert rows(app) == []
    assert any("skipped" in r.getMessage() for r in caplog.records)


def test_deleted_without_url_is_skipped(app: Flask, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="flask_indexnow"):
        signals.resource_deleted.send(app, resource=object())
        signals.resource_before_delete.send(app)
    assert rows(app) == []
    assert len([r for r in caplog.records if "skipped" in r.getMessage()]) == 2


def test_a_failing_url_function_does_not_raise(app: Flask, caplog: pytest.LogCaptureFixture) -> None:
    ext: IndexNow = app.extensions["indexnow"].extension

    class Broken:
        pass

    ext.watch(Broken, url=lambda b: b.missing_attribute)
    signals.resource_saved.send(app, resource=Broken())
    assert rows(app) == []
    assert "could not be read" in caplog.text


@pytest.mark.parametrize("sender", [None, "app", object()])
def test_sender_must_be_an_app_with_the_extension(app: Flask, sender: object, caplog) -> None:
    signals.resource_saved.send(sender, url="https://example.com/a")
    assert rows(app) == []
    assert "sender" in caplog.text


def test_disabled_ignores_events(make_app) -> None:
    app = make_app(INDEXNOW_ENABLED=False)
    with app.app_context():
        signals.resource_saved.send(app, url="https://example.com/a")
        assert rows(app) == []


def test_each_app_gets_its_own_events(make_app) -> None:
    one = make_app()
    two = make_app(INDEXNOW_TABLE_PREFIX=f"{RUN_PREFIX}second_")
    signals.resource_saved.send(one, url="https://example.com/one")
    signals.resource_saved.send(two, url="https://example.com/two")
    assert [r.url for r in rows(one)] == ["https://example.com/one"]
    assert [r.url for r in rows(two)] == ["https://example.com/two"]


def test_url_enqueued_signal(app: Flask) -> None:
    seen = []

    def listener(sender, **kwargs):
        seen.append((sender, kwargs))

    with signals.url_enqueued.connected_to(listener):
        signals.resource_saved.send(app, url="https://example.com/a#section")
    assert seen == [(app, {"urls": ["https://example.com/a"], "action": "update"})]
