"""Issue 9, point 11, through the signals: related pages on delete and unpublish, and ``related=``."""

from __future__ import annotations

import logging

import pytest
from flask import Flask

from flask_indexnow import IndexNow, signals

from ..conftest import rows


class Doc:
    def __init__(self, slug: str, section: str) -> None:
        self.slug, self.section = slug, section


def watch_docs(app: Flask) -> None:
    ext: IndexNow = app.extensions["indexnow"].extension
    ext.watch(Doc, url=lambda d: f"https://example.com/{d.section}/{d.slug}",
              related=lambda d: [f"https://example.com/{d.section}/"])


def queued(app: Flask) -> dict[str, str]:
    return {r.url: r.action for r in rows(app)}


def test_unpublished_signal_queues_the_related_pages(app: Flask) -> None:
    watch_docs(app)
    signals.resource_unpublished.send(app, resource=Doc("a", "news"))
    assert queued(app) == {"https://example.com/news/a": "delete", "https://example.com/news/": "update"}


def test_deleted_signal_queues_the_related_pages(app: Flask) -> None:
    watch_docs(app)
    doc = Doc("b", "news")
    signals.resource_before_delete.send(app, resource=doc)
    signals.resource_deleted.send(app, resource=doc)
    assert queued(app) == {"https://example.com/news/b": "delete", "https://example.com/news/": "update"}


def test_an_explicit_related_list_wins(app: Flask) -> None:
    watch_docs(app)
    signals.resource_deleted.send(app, url="https://example.com/x", related=["https://example.com/list"])
    signals.resource_saved.send(app, resource=Doc("c", "news"), related=[])
    assert queued(app) == {"https://example.com/x": "delete", "https://example.com/list": "update",
                           "https://example.com/news/c": "update"}


@pytest.mark.parametrize("related", ["https://example.com/list", 42])
def test_a_related_that_is_no_list_is_skipped(app: Flask, related: object, caplog) -> None:
    with caplog.at_level(logging.WARNING, logger="flask_indexnow"):
        signals.resource_saved.send(app, url="https://example.com/y", related=related)
    assert rows(app) == []
    assert "related must be a list of URLs" in caplog.text


def test_a_failing_related_function_still_queues_the_resource(app: Flask, caplog) -> None:
    ext: IndexNow = app.extensions["indexnow"].extension

    class Broken:
        slug = "kept"

    def related(doc: object) -> list[str]:
        raise RuntimeError("listing unavailable")

    ext.watch(Broken, url=lambda d: f"https://example.com/{d.slug}", related=related)
    with caplog.at_level(logging.WARNING, logger="flask_indexnow"):
        signals.resource_unpublished.send(app, resource=Broken())
    assert queued(app) == {"https://example.com/kept": "delete"}
    assert "related pages of Broken skipped: listing unavailable" in caplog.text
