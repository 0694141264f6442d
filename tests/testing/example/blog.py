"""A small blog whose articles are a watched model."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from flask import Flask
from flask_sqlalchemy import SQLAlchemy

from flask_indexnow import IndexNow

db = SQLAlchemy()
indexnow = IndexNow()


class Article(db.Model):
    id = sa.Column(sa.Integer, primary_key=True)
    slug = sa.Column(sa.String(200), unique=True, nullable=False)
    published = sa.Column(sa.Boolean, nullable=False, default=False)


indexnow.watch(
    Article,
    url=lambda article: f"https://www.example.com/articles/{article.slug}",
    published=lambda article: article.published,
)


def create_app(config: dict[str, Any] | None = None) -> Flask:
    app = Flask(__name__)
    app.config.update(
        SQLALCHEMY_DATABASE_URI="sqlite:///blog.db",
        INDEXNOW_KEY="5f2b8c1d9e7a4b3c",
        INDEXNOW_ALLOWED_HOSTS=["www.example.com"],
    )
    app.config.update(config or {})
    db.init_app(app)
    indexnow.init_app(app, db=db)
    with app.app_context():
        db.create_all()
    return app
