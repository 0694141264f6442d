"""SPEC §3: watch() on SQLAlchemy models — rows in the same transaction as the change."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from flask import Flask
from flask_sqlalchemy import SQLAlchemy

from flask_indexnow import IndexNow

from ..conftest import RUN_PREFIX, rows

pytestmark = pytest.mark.every_backend  # flush and bulk-write behaviour differ by database


class Site:
    def __init__(self, app: Flask, db: SQLAlchemy, page: Any) -> None:
        self.app, self.db, self.Page = app, db, page

    def add(self, **fields: Any) -> Any:
        page = self.Page(**fields)
        self.db.session.add(page)
        self.db.session.commit()
        return page

    def queue(self) -> list[tuple[str, str]]:
        return [(r.url, r.action) for r in rows(self.app)]


@pytest.fixture
def site(make_app) -> Iterator[Site]:
    db = SQLAlchemy()

    class Page(db.Model):  # type: ignore[name-defined]
        __tablename__ = f"{RUN_PREFIX}pages"
        id = sa.Column(sa.Integer, primary_key=True)
        slug = sa.Column(sa.String(200), nullable=False)
        published = sa.Column(sa.Boolean, nullable=False, default=True)
        publish_at = sa.Column(sa.DateTime, nullable=True)
        deleted = sa.Column(sa.Boolean, nullable=False, default=False)
        body = sa.Column(sa.Text, default="")

    ext = IndexNow()
    ext.watch(
        Page,
        url=lambda p: f"https://example.com/{p.slug}",
        published=lambda p: p.published,
        published_at=lambda p: p.publish_at,
        deleted=lambda p: p.deleted,
        related=lambda p: ["https://example.com/"],
    )
    app = make_app(db=db, indexnow=ext)
    with app.app_context():
        Page.__table__.create(db.engine, checkfirst=True)
        try:
            yield Site(app, db, Page)
        finally:
            db.session.rollback()
            Page.__table__.drop(db.engine)


def test_new_published_page_is_queued_with_its_related_pages(site: Site) -> None:
    site.add(slug="hello")
    assert sorted(site.queue()) == [("https://example.com/", "update"), ("https://example.com/hello", "update")]


def test_new_draft_queues_nothing(site: Site) -> None:
    site.add(slug="draft", published=False)
    assert site.queue() == []


def test_rollback_queues_nothing(site: Site) -> None:
    site.db.session.add(site.Page(slug="oops"))
    site.db.session.flush()
    # The row exists inside the transaction, written during the flush (to the inbox, issue 18) …
    table = site.app.extensions["indexnow"].models.inbox
    inside = site.db.session.execute(sa.select(table.c.url)).scalars().all()
    assert "https://example.com/oops" in inside
    site.db.session.rollback()
    # … and is gone with it.
    assert site.queue() == []


def test_url_change_deletes_old_and_updates_new(site: Site) -> None:
    page = site.add(slug="old")
    page.slug = "new"
    site.db.session.commit()
    assert dict(site.queue()) == {
        "https://example.com/": "update",
        "https://example.com/old": "delete",
        "https://example.com/new": "update",
    }


def test_unpublish_then_republish_is_the_same_row(site: Site) -> None:
    page = site.add(slug="p")
    first = [r for r in rows(site.app) if r.url.endswith("/p")][0]
    page.published = False
    site.db.session.commit()
    assert dict(site.queue())["https://example.com/p"] == "delete"
    page.published = True
    site.db.session.commit()
    again = [r for r in rows(site.app) if r.url.endswith("/p")]
    assert [(r.id, r.action) for r in again] == [(first.id, "update")]


def test_edit_of_a_draft_queues_nothing(site: Site) -> None:
    page = site.add(slug="draft", published=False)
    page.body = "more words"
    site.db.session.commit()
    assert site.queue() == []


def test_save_without_changes_queues_nothing_new(site: Site) -> None:
    page = site.add(slug="same")
    models = site.app.extensions["indexnow"].models
    for table in (models.queue, models.inbox):  # what the add queued, merged or not
        site.db.session.execute(sa.delete(table))
    site.db.session.commit()
    page.slug = "same"  # assigning the same value is no change
    site.db.session.commit()
    assert site.queue() == []


def test_soft_delete_queues_delete(site: Site) -> None:
    page = site.add(slug="soft")
    page.deleted = True
    site.db.session.commit()
    assert dict(site.queue())["https://example.com/soft"] == "delete"


def test_hard_delete_queues_delete(site: Site) -> None:
    page = site.add(slug="gone")
    site.db.session.delete(page)
    site.db.session.commit()
    assert dict(site.queue())["https://example.com/gone"] == "delete"


def test_deleting_a_draft_queues_nothing(site: Site) -> None:
    page = site.add(slug="never", published=False)
    site.db.session.delete(page)
    site.db.session.commit()
    assert site.queue() == []


def test_future_publication_waits(site: Site, clock) -> None:
    when = (clock.now + timedelta(days=1)).replace(tzinfo=None)
    site.add(slug="soon", publish_at=when)
    row = [r for r in rows(site.app) if r.url.endswith("/soon")][0]
    assert row.available_at.replace(tzinfo=None) == when


def test_many_changes_in_one_flush(site: Site) -> None:
    for n in range(30):
        site.db.session.add(site.Page(slug=f"bulk-{n}"))
    site.db.session.commit()
    assert len(site.queue()) == 31  # 30 pages + the shared related page, deduplicated


def test_unwatched_models_are_ignored(site: Site) -> None:
    db = site.db

    class Note(db.Model):  # type: ignore[name-defined]
        __tablename__ = f"{RUN_PREFIX}notes"
        id = sa.Column(sa.Integer, primary_key=True)

    Note.__table__.create(db.engine, checkfirst=True)
    try:
        db.session.add(Note())
        db.session.commit()
        assert site.queue() == []
    finally:
        Note.__table__.drop(db.engine)


def test_disabled_extension_queues_nothing(make_app) -> None:
    db = SQLAlchemy()

    class Thing(db.Model):  # type: ignore[name-defined]
        __tablename__ = f"{RUN_PREFIX}things"
        id = sa.Column(sa.Integer, primary_key=True)

    ext = IndexNow()
    ext.watch(Thing, url=lambda t: f"https://example.com/t/{t.id}")
    app = make_app(db=db, indexnow=ext, INDEXNOW_ENABLED=False)
    with app.app_context():
        Thing.__table__.create(db.engine, checkfirst=True)
        try:
            db.session.add(Thing())
            db.session.commit()
            assert rows(app) == []
        finally:
            Thing.__table__.drop(db.engine)


def test_watch_validates_its_arguments() -> None:
    ext = IndexNow()
    with pytest.raises(TypeError, match="url="):
        ext.watch(object, url="https://example.com/")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="published="):
        ext.watch(object, url=str, published=True)  # type: ignore[arg-type]


def test_a_broken_queue_never_breaks_the_save(make_app, caplog) -> None:
    """Queue tables missing (say): the content still commits, the failure is logged."""
    db = SQLAlchemy()

    class Post(db.Model):  # type: ignore[name-defined]
        __tablename__ = f"{RUN_PREFIX}posts"
        id = sa.Column(sa.Integer, primary_key=True)
        slug = sa.Column(sa.String(50), nullable=False)

    ext = IndexNow()
    ext.watch(Post, url=lambda p: f"https://example.com/{p.slug}")
    app = make_app(db=db, indexnow=ext, create_tables=False, INDEXNOW_TABLE_PREFIX=f"{RUN_PREFIX}absent_")
    with app.app_context():
        Post.__table__.create(db.engine, checkfirst=True)
        try:
            db.session.add(Post(slug="kept"))
            db.session.commit()
            assert db.session.scalars(sa.select(Post.slug)).all() == ["kept"]
            assert "saved event skipped" in caplog.text
        finally:
            db.session.rollback()
            Post.__table__.drop(db.engine)
