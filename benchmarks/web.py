"""Figures 1 and 2: what the extension costs a visitor and an editor."""

from __future__ import annotations

import functools
import time
from pathlib import Path

import requests
import sqlalchemy as sa
from flask import Flask
from flask_sqlalchemy import SQLAlchemy

from flask_indexnow import IndexNow

from .endpoint import Endpoint
from .harness import Figure, ServerProcess, backend_name, interleave, median, ms
from .site import KEY, new_prefix, register


def request_overhead(workdir: Path, rounds: int, requests_per_sample: int) -> Figure:
    """1. A page with the extension (idle queue) vs the same app without it, on werkzeug's threaded server.

    Four servers run side by side: the pair compared (with / without) and two
    identical apps without the extension, whose ratio shows what two equal
    servers differ by in this run; the figure is the first ratio divided by
    the second.
    """
    names = {"ext": "ext", "plain": "plain", "same_a": "plain", "same_b": "plain"}
    servers = {
        name: ServerProcess("benchmarks.page_server", "--variant", variant, "--db",
                            f"sqlite:///{workdir / f'page_{name}.db'}")
        for name, variant in names.items()
    }
    sessions = {name: requests.Session() for name in servers}
    try:
        def sample(name: str) -> float:
            url = servers[name].base + "/article/1"
            http = sessions[name]
            started = time.perf_counter()
            for _ in range(requests_per_sample):
                response = http.get(url, timeout=10)
                response.raise_for_status()
            return (time.perf_counter() - started) / requests_per_sample

        for name in servers:  # warm up: imports, first queries, the first tick of the ext app
            for _ in range(20):
                sessions[name].get(servers[name].base + "/article/1", timeout=10).raise_for_status()
            time.sleep(0.2)
        timings = interleave({name: functools.partial(sample, name) for name in servers}, rounds)
    finally:
        for http in sessions.values():
            http.close()
        for server in servers.values():
            server.__exit__()
    ext, plain = median(timings["ext"]), median(timings["plain"])
    same = median(timings["same_b"]) / median(timings["same_a"])
    ratio = (ext / plain) / same
    return Figure(
        1, "request overhead, idle queue (werkzeug, SQLite page)", ms(ext), ms(plain), ratio, "<= 1.03",
        ratio <= 1.03,
        f"request overhead: raw ratio {ext / plain:.3f}, two identical apps {same:.3f}; "
        f"{rounds} interleaved rounds of {requests_per_sample} sequential requests per server.",
    )


def save_latency(database_url: str, rounds: int, saves_per_sample: int) -> Figure:
    """2. Saving a watched model (the change is queued in the same transaction)
    vs saving it and POSTing synchronously to an endpoint that answers in 50 ms."""
    with Endpoint(delay=0.05) as endpoint:
        sites = {name: _article_site(database_url, endpoint.url, watched=name == "queued")
                 for name in ("queued", "synchronous", "plain")}

        def sample(name: str) -> float:
            app, db, Article = sites[name]
            with app.app_context():
                article = db.session.get(Article, 1)
                assert article is not None
                started = time.perf_counter()
                for n in range(saves_per_sample):
                    article.title = f"Revision {time.perf_counter_ns()} {n}"
                    db.session.commit()
                    if name == "synchronous":  # "plain": the save alone, neither queued nor sent
                        response = requests.post(endpoint.url, json={
                            "host": "www.example.com", "key": KEY,
                            "keyLocation": f"https://www.example.com/{KEY}.txt",
                            "urlList": ["https://www.example.com/articles/1"],
                        }, timeout=10)
                        response.raise_for_status()
                elapsed = time.perf_counter() - started
                db.session.remove()
            return elapsed / saves_per_sample

        for name in sites:
            sample(name)  # warm up
        timings = interleave({name: functools.partial(sample, name) for name in sites}, rounds)
        queued, synchronous = median(timings["queued"]), median(timings["synchronous"])
        plain = median(timings["plain"])
        app, db, _ = sites["queued"]
        with app.app_context():
            state = app.extensions["indexnow"]
            state.extension.merge_inbox()  # the saves wait in the inbox until a pass merges them
            with db.engine.connect() as connection:
                rows = connection.execute(sa.select(sa.func.count()).select_from(state.models.Queue.__table__)).scalar()
        assert rows == 1, "the queued saves did not queue their URL"
    ratio = queued / synchronous
    backend = backend_name(database_url)
    return Figure(2, f"save latency: queued vs synchronous POST (50 ms endpoint, {backend})", ms(queued),
                  ms(synchronous), ratio, "<= 0.05", ratio <= 0.05,
                  f"save latency: the save alone (no extension, no POST) takes {ms(plain)}, so no queue "
                  f"can go below {plain / synchronous:.3f} here; queueing adds {ms(queued - plain)} per save.")


def _article_site(database_url: str, endpoint_url: str, *, watched: bool) -> tuple[Flask, SQLAlchemy, type]:
    prefix = new_prefix()
    app = Flask("bench_save")
    app.config.update(
        SQLALCHEMY_DATABASE_URI=database_url,
        INDEXNOW_TABLE_PREFIX=prefix,
        INDEXNOW_KEY=KEY,
        INDEXNOW_ENDPOINT=endpoint_url,
        INDEXNOW_ALLOW_PRIVATE_ENDPOINT=True,
        INDEXNOW_QUEUE_ENABLED=False,
        INDEXNOW_ALLOWED_HOSTS=["www.example.com"],
    )
    db = SQLAlchemy()
    db.init_app(app)

    class Article(db.Model):  # type: ignore[name-defined,misc]
        __tablename__ = f"{prefix}articles"
        id = sa.Column(sa.Integer, primary_key=True)
        slug = sa.Column(sa.String(200), nullable=False)
        title = sa.Column(sa.String(200), nullable=False)
        published = sa.Column(sa.Boolean, nullable=False, default=True)

    if watched:
        indexnow = IndexNow(app, db=db)
        indexnow.watch(Article, url=lambda a: f"https://www.example.com/articles/{a.slug}",
                       published=lambda a: a.published)
    with app.app_context():
        db.create_all()
        register(db, list(db.metadata.sorted_tables), app)
        db.session.add(Article(id=1, slug="1", title="First"))
        db.session.commit()
        db.session.remove()
    return app, db, Article
