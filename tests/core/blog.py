"""A small blog on a test database: posts with a category, tags, a property, a hybrid and a method.

Shared by the tests of issue 9 (the state before a change, ``fields=``, related
pages): ``make_blog(make_app, **watch_kwargs)`` builds the app, watches ``Post``
with those arguments and creates the tables; ``Blog.close()`` drops them.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from flask import Flask
from flask_sqlalchemy import SQLAlchemy
from sqlalchemy.ext.hybrid import hybrid_property
from sqlalchemy.orm import relationship

from flask_indexnow import IndexNow

from ..conftest import RUN_PREFIX, rows


class Blog:
    def __init__(self, app: Flask, db: SQLAlchemy, models: dict[str, Any]) -> None:
        self.app, self.db = app, db
        self.Post, self.Category, self.Tag = models["Post"], models["Category"], models["Tag"]
        self.tables = models["tables"]

    @property
    def session(self) -> Any:
        return self.db.session

    def post(self, slug: str = "hello", status: str = "published", category: str = "news", **fields: Any) -> Any:
        category_obj = self.session.scalars(sa.select(self.Category).filter_by(slug=category)).first()
        if category_obj is None:
            category_obj = self.Category(slug=category)
        post = self.Post(slug=slug, status=status, category=category_obj, title=fields.pop("title", "Hello"), **fields)
        self.session.add(post)
        self.session.commit()
        self.clear_queue()
        return post

    def clear_queue(self) -> None:
        models = self.app.extensions["indexnow"].models
        with self.db.engine.begin() as connection:
            for table in (models.queue, models.inbox):  # what the set-up queued, merged or not
                connection.execute(table.delete())

    def queue(self) -> dict[str, str]:
        return {r.url: r.action for r in rows(self.app)}

    def close(self) -> None:
        self.session.rollback()
        self.session.remove()
        for table in reversed(self.tables):
            table.drop(self.db.engine, checkfirst=True)


def define_models(db: SQLAlchemy) -> dict[str, Any]:
    post_tags = sa.Table(
        f"{RUN_PREFIX}post_tags", db.metadata,
        sa.Column("post_id", sa.ForeignKey(f"{RUN_PREFIX}posts.id"), primary_key=True),
        sa.Column("tag_id", sa.ForeignKey(f"{RUN_PREFIX}tags.id"), primary_key=True),
    )

    class Category(db.Model):  # type: ignore[name-defined]
        __tablename__ = f"{RUN_PREFIX}categories"
        id = sa.Column(sa.Integer, primary_key=True)
        slug = sa.Column(sa.String(100), nullable=False)

    class Tag(db.Model):  # type: ignore[name-defined]
        __tablename__ = f"{RUN_PREFIX}tags"
        id = sa.Column(sa.Integer, primary_key=True)
        name = sa.Column(sa.String(100), nullable=False)

    class Post(db.Model):  # type: ignore[name-defined]
        __tablename__ = f"{RUN_PREFIX}posts"
        id = sa.Column(sa.Integer, primary_key=True)
        slug = sa.Column(sa.String(100), nullable=False)
        title = sa.Column(sa.String(200), nullable=False, default="")
        status = sa.Column(sa.String(20), nullable=False, default="published")
        last_seen = sa.Column(sa.Integer, nullable=True)
        category_id = sa.Column(sa.ForeignKey(f"{RUN_PREFIX}categories.id"), nullable=True)
        category = relationship(Category)
        tags = relationship(Tag, secondary=post_tags)

        @property
        def is_published(self) -> Any:
            return self.status == "published"

        @hybrid_property
        def live(self) -> Any:  # a bool on an instance, an SQL expression on the class
            return self.status == "published"

        @hybrid_property
        def path(self) -> str:
            return f"/{self.slug}"

        def is_visible(self) -> Any:
            return self.status == "published"

        def absolute_url(self) -> str:
            return f"https://example.com/posts/{self.slug}"

    tables = [Category.__table__, Tag.__table__, Post.__table__, post_tags]
    return {"Post": Post, "Category": Category, "Tag": Tag, "tables": tables}


def make_blog(make_app: Any, watch: Any = None, **config: Any) -> Blog:
    """An app whose ``Post`` is watched by ``watch(ext, Post)`` (default: url by slug, published by status)."""
    db = SQLAlchemy()
    models = define_models(db)
    ext = IndexNow()
    if watch is None:
        ext.watch(models["Post"], url=lambda p: f"https://example.com/posts/{p.slug}",
                  published=lambda p: p.is_published)
    else:
        watch(ext, models["Post"])
    app = make_app(db=db, indexnow=ext, **config)
    ctx = app.app_context()
    ctx.push()
    app.extensions["indexnow_test_ctx"] = ctx
    for table in models["tables"]:
        table.create(db.engine, checkfirst=True)
    return Blog(app, db, models)


def close_blog(blog: Blog) -> None:
    try:
        blog.close()
    finally:
        blog.app.extensions.pop("indexnow_test_ctx").pop()
