"""Figure 9: what INDEXNOW_VERIFY="app" adds to a pass, per URL, against serving the page once.

Three variants run side by side on one app (a real page: a database read and a
template of about 10 kB with a full head): a pass over N queued URLs with
verification, the same pass without it (INDEXNOW_VERIFY=None on a twin app),
and N GETs of the same pages through Flask's test client. Both passes are dry
runs (everything but the POST), so the difference between them is the
verification alone: asking each page in-process, robots.txt from the cache,
reading the head, and the one transaction that records the verdicts. The
figure is that difference per URL over the test client's cost per page
(goal: at most 1.1).
"""

from __future__ import annotations

import functools
import time
from typing import Any

import sqlalchemy as sa
from flask import Flask, render_template
from flask_sqlalchemy import SQLAlchemy
from jinja2 import DictLoader

from flask_indexnow import IndexNow

from .harness import Figure, backend_name, interleave, median, ms
from .site import KEY, new_prefix, register

HOST = "www.example.com"
TEMPLATE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{{ page.title }}</title>
<meta name="description" content="{{ page.title }}"><link rel="canonical" href="https://www.example.com/p/{{ page.id }}">
<link rel="stylesheet" href="/static/site.css"><meta name="viewport" content="width=device-width, initial-scale=1">
</head><body><header><nav>{% for n in range(20) %}<a href="/p/{{ n }}">Page {{ n }}</a> {% endfor %}</nav></header>
<main><h1>{{ page.title }}</h1>{% for n in range(40) %}<p>{{ page.body }} ({{ n }})</p>{% endfor %}</main></body></html>"""


def _app(database_url: str, *, verify: str | None) -> tuple[Flask, Any]:
    prefix = new_prefix()
    app = Flask("bench_verify")
    app.config.update(
        SQLALCHEMY_DATABASE_URI=database_url,
        INDEXNOW_TABLE_PREFIX=prefix,
        INDEXNOW_KEY=KEY,
        INDEXNOW_ENDPOINT="http://127.0.0.1:9/indexnow",
        INDEXNOW_ALLOW_PRIVATE_ENDPOINT=True,
        INDEXNOW_ALLOWED_HOSTS=[HOST],
        INDEXNOW_DRY_RUN=True,
        INDEXNOW_QUEUE_ENABLED=False,  # no tick after the test client's requests
        INDEXNOW_VERIFY=verify,
        INDEXNOW_BATCH_SIZE=10_000,
    )
    app.jinja_loader = DictLoader({"page.html": TEMPLATE})  # compiled once, as a site's templates are
    db = SQLAlchemy()
    db.init_app(app)

    class Page(db.Model):  # type: ignore[name-defined,misc]
        __tablename__ = f"{prefix}pages"
        id = sa.Column(sa.Integer, primary_key=True)
        title = sa.Column(sa.String(200), nullable=False)
        body = sa.Column(sa.Text, nullable=False)

    @app.route("/p/<int:page_id>")
    def show(page_id: int) -> str:
        page = db.get_or_404(Page, page_id)
        return render_template("page.html", page=page)

    @app.route("/robots.txt")
    def robots() -> Any:
        return app.response_class("User-agent: *\nDisallow: /admin/\n", mimetype="text/plain")

    indexnow = IndexNow(app, db=db)
    with app.app_context():
        db.metadata.create_all(db.engine)
        register(db, list(db.metadata.sorted_tables), app)
        db.session.add_all(Page(id=n, title=f"Page {n}", body="Lorem ipsum dolor sit amet. " * 8) for n in range(1000))
        db.session.commit()
        db.session.remove()
    return app, indexnow


def verification(number: int, database_url: str, urls: int, rounds: int) -> Figure:
    backend = backend_name(database_url)
    verified, ext_on = _app(database_url, verify="app")
    plain, ext_off = _app(database_url, verify=None)
    paths = [f"/p/{n}" for n in range(urls)]
    client = verified.test_client()

    def one_pass(app: Flask, ext: IndexNow) -> float:
        with app.app_context():
            result = ext.enqueue_many([f"https://{HOST}{path}" for path in paths])
            assert not result.rejected, result.rejected
            started = time.perf_counter()
            done = ext.process_queue(limit=urls)
            elapsed = time.perf_counter() - started
            assert done.dry_run == urls and done.skipped == 0, done
        return elapsed / urls

    def pages() -> float:
        started = time.perf_counter()
        for path in paths:
            response = client.get(path, base_url=f"https://{HOST}")
            assert response.status_code == 200
        return (time.perf_counter() - started) / urls

    variants = {"verified": functools.partial(one_pass, verified, ext_on),
                "plain": functools.partial(one_pass, plain, ext_off), "page": pages}
    for run in variants.values():
        run()  # warm up (and robots.txt read once, as a pass does every few minutes)
    timings = interleave(variants, rounds)
    with_verify, without, page = (median(timings[name]) for name in ("verified", "plain", "page"))
    added = with_verify - without
    ratio = added / page
    return Figure(
        number, f"verification per URL vs serving the page once, test client ({backend})", ms(added), ms(page),
        ratio, "<= 1.1", ratio <= 1.1,
        f"verification: a dry-run pass of {urls} URLs takes {ms(with_verify)} per URL with INDEXNOW_VERIFY='app' "
        f"and {ms(without)} without; {rounds} interleaved rounds.",
    )
