"""A small site served by werkzeug's threaded server, with or without the extension.

``python -m benchmarks.page_server --variant ext|plain --db sqlite:///…``
prints its port, then serves ``/article/<id>``: one SELECT and a Jinja
template, like a page of a real site. The ``ext`` variant is the same app
with IndexNow registered (after-request tick on, an idle queue).
"""

from __future__ import annotations

import argparse
import logging

import sqlalchemy as sa
from flask import Flask, abort, render_template
from flask_sqlalchemy import SQLAlchemy
from jinja2 import DictLoader
from werkzeug.serving import make_server

from flask_indexnow import IndexNow

PAGE = """<!doctype html><title>{{ article.title }}</title>
<h1>{{ article.title }}</h1>
<ul>{% for word in article.body.split() %}<li>{{ word }}</li>{% endfor %}</ul>"""


def create_app(variant: str, database_url: str) -> Flask:
    app = Flask("bench_site")
    app.config.update(
        SQLALCHEMY_DATABASE_URI=database_url,
        INDEXNOW_KEY="b3nchk3y0f1ndexn0w",
        INDEXNOW_ENDPOINT="http://127.0.0.1:9/indexnow",
        INDEXNOW_ALLOW_PRIVATE_ENDPOINT=True,
    )
    app.jinja_loader = DictLoader({"article.html": PAGE})  # compiled once, like a template file
    db = SQLAlchemy()
    db.init_app(app)

    class Article(db.Model):  # type: ignore[name-defined,misc]
        __tablename__ = "bench_articles"
        id = sa.Column(sa.Integer, primary_key=True)
        title = sa.Column(sa.String(200), nullable=False)
        body = sa.Column(sa.Text, nullable=False)

    if variant == "ext":
        IndexNow(app, db=db)

    @app.route("/article/<int:article_id>")
    def article(article_id: int) -> str:
        found = db.session.get(Article, article_id)
        if found is None:
            abort(404)
        return render_template("article.html", article=found)

    with app.app_context():
        db.create_all()
        if db.session.get(Article, 1) is None:
            db.session.add(Article(id=1, title="Benchmarks", body=" ".join(f"word{n}" for n in range(30))))
            db.session.commit()
    return app


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--variant", choices=["ext", "plain"], required=True)
    parser.add_argument("--db", required=True)
    args = parser.parse_args()
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no access log: it would weigh on both variants
    server = make_server("127.0.0.1", 0, create_app(args.variant, args.db), threaded=True)
    print(f"PORT {server.server_port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
