"""The site that the scale tests run in other processes.

``flask --app "tests.scale.siteapp:create_app()" indexnow work`` builds it from
the JSON in ``INDEXNOW_SCALE_CONFIG`` (the test copies its own app's database
URL, table prefix, endpoint and cache settings there), so worker processes
share the test's tables exactly as workers on other machines would.
"""

from __future__ import annotations

import json
import os

import sqlalchemy as sa
from flask import Flask, request
from flask_sqlalchemy import SQLAlchemy

from flask_indexnow import IndexNow

from .. import network_guard

CONFIG_ENV = "INDEXNOW_SCALE_CONFIG"


#: A config key naming the table of a watched ``Page`` model: the app then serves ``/edit/<id>``.
PAGES_TABLE = "SCALE_PAGES_TABLE"
#: With :data:`PAGES_TABLE`: a table of the site's own record of each edit, a watched ``Revision`` model whose URL
#: names the revision, so that a test can tell every save's event from every other's.
REVISIONS_TABLE = "SCALE_REVISIONS_TABLE"


def create_app() -> Flask:
    network_guard.install()  # this process, too, talks only to loopback
    app = Flask("scale_site")
    app.config.update(json.loads(os.environ[CONFIG_ENV]))
    db = SQLAlchemy()
    db.init_app(app)
    indexnow = IndexNow(app, db=db)
    app.add_url_rule("/", "home", lambda: "hello")
    if app.config.get(PAGES_TABLE):
        add_pages(app, db, indexnow, app.config[PAGES_TABLE], app.config.get(REVISIONS_TABLE))
    return app


def add_pages(app: Flask, db: SQLAlchemy, indexnow: IndexNow, table: str, revisions: str | None = None) -> None:
    """A watched model and the page that edits it: ``/edit/<id>?title=…&published=0|1`` (a site's own save).

    With ``revisions``, each save also adds a row there (``page_id``, ``title``), in the same transaction.
    """

    class Page(db.Model):  # type: ignore[name-defined]
        __tablename__ = table
        id = sa.Column(sa.Integer, primary_key=True)
        title = sa.Column(sa.String(100), nullable=False)
        published = sa.Column(sa.Boolean, nullable=False, default=True)

    indexnow.watch(Page, url=lambda p: f"https://site.example.com/page/{p.id}", published=lambda p: p.published)
    revision_model: type | None = None
    if revisions:
        class Revision(db.Model):  # type: ignore[name-defined]
            __tablename__ = revisions
            id = sa.Column(sa.Integer, primary_key=True)
            page_id = sa.Column(sa.Integer, nullable=False)
            title = sa.Column(sa.String(100), nullable=False)

        indexnow.watch(Revision, url=lambda r: f"https://site.example.com/page/{r.page_id}/rev/{r.title}")
        revision_model = Revision

    def edit(page_id: int) -> str:
        page = db.session.get(Page, page_id)
        page.title = request.args["title"]
        page.published = request.args.get("published") != "0"
        if revision_model is not None:
            db.session.add(revision_model(page_id=page_id, title=page.title))
        db.session.commit()
        return "saved"

    app.add_url_rule("/edit/<int:page_id>", "edit", edit)
