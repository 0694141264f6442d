"""The blog that figure 14 serves with gunicorn: posts with tag pages, edited and read.

``gunicorn "benchmarks.blog_server:create_app()"`` builds it from the JSON in
``INDEXNOW_BENCH_BLOG`` (database URL, table prefix, endpoint, variant). The
``plain`` variant has no extension; ``ext`` watches ``Post`` with ``related=``
(its tag page and the home page) and ``fields=``, and ticks after responses
(INDEXNOW_TICK_MODE from the JSON: the background ticker, or the close
callback as before issue 19).
"""

from __future__ import annotations

import json
import os
from typing import Any

import sqlalchemy as sa
from flask import Flask, abort, render_template, request
from flask_sqlalchemy import SQLAlchemy
from jinja2 import DictLoader

from flask_indexnow import IndexNow

from .site import KEY

CONFIG_ENV = "INDEXNOW_BENCH_BLOG"
POSTS = 50
PAGE = """<!doctype html><title>{{ post.title }}</title>
<h1>{{ post.title }}</h1><p>Tagged <a href="/tags/{{ post.tag }}">{{ post.tag }}</a></p>
<ul>{% for word in post.body.split() %}<li>{{ word }}</li>{% endfor %}</ul>"""


def build(config: dict[str, Any]) -> tuple[Flask, SQLAlchemy, Any]:
    prefix = config["prefix"]
    app = Flask("bench_blog")
    app.config.update(
        SQLALCHEMY_DATABASE_URI=config["database_url"],
        INDEXNOW_TABLE_PREFIX=prefix,
        INDEXNOW_KEY=KEY,
        INDEXNOW_ENDPOINT=config["endpoint_url"],
        INDEXNOW_ALLOW_PRIVATE_ENDPOINT=True,
        INDEXNOW_ALLOWED_HOSTS=["www.example.com"],
        INDEXNOW_TICK_MODE=config.get("tick_mode", "auto"),
        **config.get("settings", {}),  # any other INDEXNOW_* setting a figure's variant needs
    )
    app.jinja_loader = DictLoader({"post.html": PAGE})
    db = SQLAlchemy()
    db.init_app(app)

    class Post(db.Model):  # type: ignore[name-defined,misc]
        __tablename__ = f"{prefix}posts"
        id = sa.Column(sa.Integer, primary_key=True)
        slug = sa.Column(sa.String(200), nullable=False)
        title = sa.Column(sa.String(200), nullable=False)
        body = sa.Column(sa.Text, nullable=False)
        tag = sa.Column(sa.String(50), nullable=False)
        published = sa.Column(sa.Boolean, nullable=False, default=True)
        views = sa.Column(sa.Integer, nullable=False, default=0)

    if config["variant"] == "ext":
        indexnow = IndexNow(app, db=db)
        indexnow.watch(
            Post,
            url=lambda p: f"https://www.example.com/posts/{p.slug}",
            published=lambda p: p.published,
            related=lambda p: [f"https://www.example.com/tags/{p.tag}", "https://www.example.com/"],
            fields=("slug", "title", "body", "tag", "published"),
        )

    @app.get("/posts/<int:post_id>")
    def show(post_id: int) -> str:
        post = db.session.get(Post, post_id)
        if post is None:
            abort(404)
        return render_template("post.html", post=post)

    @app.post("/posts/<int:post_id>")
    def edit(post_id: int) -> str:
        post = db.session.get(Post, post_id)
        if post is None:
            abort(404)
        post.body = request.form["body"]
        db.session.commit()
        return "saved"

    return app, db, Post


def seed(app: Flask, db: SQLAlchemy, post: Any) -> list[sa.Table]:
    """Create the blog's tables (the extension's too) with POSTS posts; return every table made."""
    with app.app_context():
        db.metadata.create_all(db.engine)
        for n in range(1, POSTS + 1):
            db.session.add(post(id=n, slug=f"post-{n}", title=f"Post {n}", tag=f"tag{n % 5}",
                                body=" ".join(f"word{k}" for k in range(30))))
        db.session.commit()
        if "indexnow" in app.extensions:  # the seeding queued every post: start from an empty queue
            models = app.extensions["indexnow"].models
            db.session.execute(models.inbox.delete())
            db.session.execute(models.queue.delete())
            db.session.commit()
        db.session.remove()
        return list(db.metadata.sorted_tables)


def create_app() -> Flask:
    app, _db, _post = build(json.loads(os.environ[CONFIG_ENV]))
    return app
