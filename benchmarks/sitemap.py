"""9. Building the served sitemap: time and peak memory for a large and a ten times smaller table.

Each build runs in a fresh process (spawned): the app, its watched ``Page``
model and a connection are made first, then the peak resident set is reset
(``/proc/self/clear_refs``; ``getrusage`` where that is refused) and one
build consumes every part (what the route does before caching them). The
figure is the time per row of the large build over that of the small one
(goal: linear, ≤ 1.15), and the growth of the resident set during the large
build (goal: under 50 MB). Every row is live and has a ledger entry with a
``changed_at`` (each URL's lastmod is looked up: the worst case).
"""

from __future__ import annotations

import multiprocessing
import resource
import time
from typing import Any

import sqlalchemy as sa
from flask import Flask
from flask_sqlalchemy import SQLAlchemy

from flask_indexnow import IndexNow

from .harness import Figure, backend_name
from .processes import _rss_kib
from .site import config_for, new_prefix, register, utcnow

NOWHERE = "http://127.0.0.1:9/indexnow"


def _site(database_url: str, prefix: str) -> tuple[Flask, SQLAlchemy, Any]:
    app = Flask("bench-sitemap")
    app.config.update(config_for(database_url, NOWHERE, prefix, INDEXNOW_SITEMAP_URL="/sitemap.xml",
                                 INDEXNOW_ALLOWED_HOSTS=["www.example.org"]))
    db = SQLAlchemy()
    db.init_app(app)
    indexnow = IndexNow()

    class Page(db.Model):  # type: ignore[name-defined]
        __tablename__ = f"{prefix}pages"
        id = sa.Column(sa.Integer, primary_key=True)
        slug = sa.Column(sa.String(100), nullable=False)
        published = sa.Column(sa.Boolean, nullable=False)

    indexnow.watch(Page, url=lambda p: f"https://www.example.org/posts/{p.slug}", published=lambda p: p.published)
    indexnow.init_app(app, db=db)
    return app, db, Page


def _fill(database_url: str, prefix: str, rows: int) -> None:
    """``rows`` live pages and their ledger entries, set-based (generate_series / a recursive CTE)."""
    app, db, page = _site(database_url, prefix)
    with app.app_context():
        state = app.extensions["indexnow"]
        tables = [page.__table__, *state.models.tables]
        db.metadata.create_all(db.engine, tables=tables)
        register(db, tables, app)
        ledger = state.models.url_state.name
        dialect = db.engine.dialect.name
        if dialect == "postgresql":
            series, slug = "FROM generate_series(1, :n) AS s(g)", "'post-' || g"
            digest = "encode(sha256(convert_to('https://www.example.org/posts/post-' || g, 'UTF8')), 'hex')"
            with_ = ""
        else:
            series, slug = "FROM s", "'post-' || g"
            digest = "printf('%064d', g)"  # SQLite has no sha256: look-ups still go through the index
            with_ = "WITH RECURSIVE s(g) AS (SELECT 1 UNION ALL SELECT g + 1 FROM s WHERE g < :n) "
        stamp = utcnow().replace(tzinfo=None, microsecond=0)
        stamp_value: Any = stamp.isoformat(sep=" ") + ".000000" if dialect == "sqlite" else stamp
        with db.engine.begin() as connection:
            connection.execute(sa.text(
                f"INSERT INTO {page.__table__.name} (id, slug, published) {with_}SELECT g, {slug}, true {series}"
            ), {"n": rows})
            connection.execute(sa.text(
                f"INSERT INTO {ledger} (host, url, url_hash, changed_at) {with_}"
                f"SELECT 'www.example.org', 'https://www.example.org/posts/' || {slug}, {digest}, :t {series}"
            ), {"n": rows, "t": stamp_value})
        if dialect == "postgresql":
            with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
                connection.execute(sa.text(f"ANALYZE {page.__table__.name}"))
                connection.execute(sa.text(f"ANALYZE {ledger}"))


def _measure(database_url: str, prefix: str, results: Any) -> None:
    """In a fresh process: (URLs listed, seconds, resident set before, its peak during the build)."""
    from flask_indexnow.sitemap.build import build_parts

    app, db, _page = _site(database_url, prefix)
    with app.app_context():
        state = app.extensions["indexnow"]
        with db.engine.connect() as connection:
            connection.execute(sa.text("SELECT 1"))
        before, _ = _rss_kib()
        try:
            with open("/proc/self/clear_refs", "w", encoding="ascii") as refs:
                refs.write("5")
            exact = True
        except OSError:
            exact = False
        started = time.perf_counter()
        listed = sum(part.count for part in build_parts(state))
        seconds = time.perf_counter() - started
        _, peak = _rss_kib()
        if not exact:
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    results.put((listed, seconds, before, peak))


def sitemap_build(number: int, database_url: str, big: int, small: int) -> Figure:
    context = multiprocessing.get_context("spawn")
    measured: dict[int, tuple[float, int, int]] = {}
    for rows in (small, big):
        prefix = new_prefix()
        _fill(database_url, prefix, rows)
        results = context.Queue()
        process = context.Process(target=_measure, args=(database_url, prefix, results))
        process.start()
        listed, seconds, before, peak = results.get(timeout=3600)
        process.join(60)
        assert listed == rows, (listed, rows)
        measured[rows] = (seconds, before, peak)
    (t_small, _, _), (t_big, before, peak) = measured[small], measured[big]
    per_row = (t_big / big) / (t_small / small)
    growth = (peak - before) / 1024
    return Figure(
        number, f"sitemap build of {big:,} rows vs {small:,}, time per row ({backend_name(database_url)})",
        f"{t_big:.1f} s, peak {peak / 1024:.1f} MiB (+{growth:.1f})",
        f"{t_small:.2f} s, peak {measured[small][2] / 1024:.1f} MiB (+{(measured[small][2] - measured[small][1]) / 1024:.1f})",
        per_row, "≤ 1.15 and growth < 50 MB", per_row <= 1.15 and growth < 50,
        "sitemap build: one build in a fresh process, every part made (gzip) and dropped, as the route does "
        "before caching; every row live with a ledger change time; (+) is the resident set's growth during "
        "the build.",
    )
