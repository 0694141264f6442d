"""A small multi-site app whose ``Page`` model is watched, for the tests of the served sitemap.

``make_site(make_app, **config)`` builds it on the test's backend with
INDEXNOW_SITEMAP_URL = "/sitemap.xml", creates the page table and returns a
:class:`Site`; the XML helpers parse what the route answers and check it
against the sitemaps.org structure (``schemas/``, with lxml).
"""

from __future__ import annotations

import gzip
from datetime import datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from flask import Flask
from flask_sqlalchemy import SQLAlchemy
from lxml import etree  # type: ignore[import-untyped]

from flask_indexnow import IndexNow

from ..conftest import RUN_PREFIX

NS = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
_SCHEMAS = Path(__file__).parent / "schemas"
URLSET_SCHEMA = etree.XMLSchema(etree.parse(str(_SCHEMAS / "sitemap.xsd")))
INDEX_SCHEMA = etree.XMLSchema(etree.parse(str(_SCHEMAS / "siteindex.xsd")))


class Site:
    def __init__(self, app: Flask, db: SQLAlchemy, page: Any, indexnow: IndexNow) -> None:
        self.app, self.db, self.Page, self.indexnow = app, db, page, indexnow
        self.state = app.extensions["indexnow"]

    def add(self, slug: str, host: str = "a.example.org", **fields: Any) -> Any:
        page = self.Page(slug=slug, host=host, **fields)
        self.db.session.add(page)
        self.db.session.commit()
        return page

    def bulk(self, count: int, host: str = "a.example.org") -> None:
        """``count`` published pages inserted directly (no events: rows older than the extension)."""
        table = self.Page.__table__
        with self.db.engine.begin() as connection:
            for start in range(0, count, 1000):
                connection.execute(table.insert(), [
                    {"slug": f"bulk-{i}", "host": host, "status": "published", "deleted": False, "title": "t",
                     "views": 0} for i in range(start, min(count, start + 1000))])

    def process(self) -> Any:
        return self.indexnow.process_queue(limit=10_000)

    def get(self, path: str = "/sitemap.xml", host: str = "a.example.org", **headers: Any) -> Any:
        client = self.app.test_client()
        return client.get(path, base_url=f"https://{host}", headers=headers)

    def close(self) -> None:
        self.db.session.rollback()
        self.db.session.remove()
        self.Page.__table__.drop(self.db.engine, checkfirst=True)


def make_site(make_app: Any, *, watch: dict[str, Any] | None = None, **config: Any) -> Site:
    db = SQLAlchemy()
    indexnow = IndexNow()

    class Page(db.Model):  # type: ignore[name-defined]
        __tablename__ = f"{RUN_PREFIX}sm_pages"
        id = sa.Column(sa.Integer, primary_key=True)
        host = sa.Column(sa.String(100), nullable=False)
        slug = sa.Column(sa.String(200), nullable=False)
        title = sa.Column(sa.String(200), nullable=False, default="")
        status = sa.Column(sa.String(20), nullable=False, default="published")
        deleted = sa.Column(sa.Boolean, nullable=False, default=False)
        published_at = sa.Column(sa.DateTime)
        views = sa.Column(sa.Integer, nullable=False, default=0)

    options: dict[str, Any] = {
        "url": lambda p: f"https://{p.host}/p/{p.slug}",
        "published": lambda p: p.status == "published",
        "published_at": lambda p: p.published_at,
        "deleted": lambda p: p.deleted,
        "fields": ["title", "status", "slug", "deleted", "published_at", "host"],
    }
    options.update(watch or {})
    indexnow.watch(Page, **options)
    config.setdefault("INDEXNOW_SITEMAP_URL", "/sitemap.xml")
    config.setdefault("INDEXNOW_ALLOWED_HOSTS", ["a.example.org", "b.example.org"])
    app = make_app(db=db, indexnow=indexnow, **config)
    with app.app_context():
        Page.__table__.create(db.engine, checkfirst=True)
    return Site(app, db, Page, indexnow)


def body_of(response: Any) -> bytes:
    """The response's document, gunzipped when it came compressed."""
    data: bytes = response.get_data()
    return gzip.decompress(data) if response.headers.get("Content-Encoding") == "gzip" else data


def parse_urlset(data: bytes) -> dict[str, str | None]:
    """loc → lastmod of a ``<urlset>`` valid against the sitemaps.org schema (fails the test otherwise)."""
    root = etree.fromstring(data)
    URLSET_SCHEMA.assertValid(root)
    result: dict[str, str | None] = {}
    for url in root.findall("s:url", NS):
        result[url.findtext("s:loc", namespaces=NS)] = url.findtext("s:lastmod", namespaces=NS)
    return result


def parse_index(data: bytes) -> list[str]:
    """The part URLs of a ``<sitemapindex>`` valid against the schema."""
    root = etree.fromstring(data)
    INDEX_SCHEMA.assertValid(root)
    return [s.findtext("s:loc", namespaces=NS) for s in root.findall("s:sitemap", NS)]


def w3c_time(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)
