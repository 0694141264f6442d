"""Issue 9, point 5: INDEXNOW_BASE_URL makes ``url_for(_external=True)`` canonical everywhere.

Outside a request (a CLI command, a thread) and inside one with a forged Host,
``url=`` and ``related=`` functions build URLs for the configured origin. A
dropped event is logged on one line naming the model and its primary key, and
counted for the status page.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from flask import Flask, request, url_for
from flask_sqlalchemy import SQLAlchemy

from flask_indexnow import ConfigurationError, IndexNow, signals
from flask_indexnow.config import load_settings

from ..conftest import RUN_PREFIX, rows, site_table

BASE = "https://www.example.org"


class Site:
    def __init__(self, app: Flask, db: SQLAlchemy, page: Any) -> None:
        self.app, self.db, self.Page = app, db, page

    def queued(self) -> dict[str, str]:
        return {r.url: r.action for r in rows(self.app)}


def site_app(make_app, **config: Any) -> Iterator[Site]:
    db = SQLAlchemy()

    class Page(db.Model):  # type: ignore[name-defined]
        __tablename__ = f"{RUN_PREFIX}base_pages"
        id = sa.Column(sa.Integer, primary_key=True)
        slug = sa.Column(sa.String(100), nullable=False)

    ext = IndexNow()
    ext.watch(Page, url=lambda p: url_for("page", slug=p.slug, _external=True),
              related=lambda p: [url_for("index", _external=True)])
    ext.status_auth(lambda: True)
    app = make_app(db=db, indexnow=ext, **config)

    @app.route("/")
    def index() -> str:
        return "home"

    @app.route("/pages/<slug>")
    def page(slug: str) -> str:
        return slug

    @app.route("/edit/<slug>", methods=["POST"])
    def edit(slug: str) -> str:
        db.session.add(Page(slug=slug))
        db.session.commit()
        return request.host

    with app.app_context():
        with site_table(db, Page):
            yield Site(app, db, Page)


@pytest.fixture
def site(make_app) -> Iterator[Site]:
    yield from site_app(make_app, INDEXNOW_BASE_URL=BASE)


def test_outside_a_request_urls_are_built_for_the_base_url(site: Site) -> None:
    site.db.session.add(site.Page(slug="cli"))
    site.db.session.commit()
    assert site.queued() == {f"{BASE}/pages/cli": "update", f"{BASE}/": "update"}


def test_a_forged_host_never_leaks_into_the_urls(site: Site) -> None:
    client = site.app.test_client()
    response = client.post("/edit/visit", base_url="http://evil.example.net")
    assert response.get_data(as_text=True) == "evil.example.net"  # the request itself saw the forged host
    assert site.queued() == {f"{BASE}/pages/visit": "update", f"{BASE}/": "update"}


def test_in_a_thread(site: Site) -> None:
    def work() -> None:
        with site.app.app_context():
            site.db.session.add(site.Page(slug="thread"))
            site.db.session.commit()
            site.db.session.remove()

    thread = threading.Thread(target=work)
    thread.start()
    thread.join(30)
    assert site.queued() == {f"{BASE}/pages/thread": "update", f"{BASE}/": "update"}


def test_a_signal_with_a_resource_uses_the_base_url_too(site: Site) -> None:
    page = site.Page(slug="signalled")  # not added: the signal alone
    with site.app.test_request_context(base_url="http://evil.example.net"):
        signals.resource_saved.send(site.app, resource=page)
    assert site.queued() == {f"{BASE}/pages/signalled": "update", f"{BASE}/": "update"}


def test_the_request_context_is_restored_after_the_adapter_calls(site: Site) -> None:
    with site.app.test_request_context("/pages/x", base_url="http://other.example.net"):
        site.db.session.add(site.Page(slug="inside"))
        site.db.session.commit()
        assert request.host == "other.example.net"
        assert url_for("index", _external=True) == "http://other.example.net/"


def test_without_base_url_a_url_that_cannot_be_built_is_one_line_naming_the_resource(
    make_app, caplog: pytest.LogCaptureFixture
) -> None:
    for site in site_app(make_app):
        with caplog.at_level(logging.WARNING, logger="flask_indexnow"):
            page = site.Page(slug="lost")
            site.db.session.add(page)
            site.db.session.commit()
        assert site.queued() == {}
        lines = [r for r in caplog.records if "skipped" in r.getMessage()]
        assert len(lines) == 1
        message = lines[0].getMessage()
        assert f"Page {page.id}" in message and "could not be built" in message and "INDEXNOW_BASE_URL" in message
        assert lines[0].exc_info is None  # no traceback for a URL that cannot be built
        data = site.app.test_client().get("/indexnow/status.json").get_json()
        assert data["skipped_events_24h"] == 1
        page_html = site.app.test_client().get("/indexnow/").get_data(as_text=True)
        assert "1 event skipped in the last 24 h: see the log." in page_html


def test_a_refused_url_is_logged_and_counted(make_app, caplog: pytest.LogCaptureFixture) -> None:
    for site in site_app(make_app, INDEXNOW_BASE_URL=BASE, INDEXNOW_ALLOWED_HOSTS=["other.example.com"]):
        with caplog.at_level(logging.WARNING, logger="flask_indexnow"):
            page = site.Page(slug="refused")
            site.db.session.add(page)
            site.db.session.commit()
        assert site.queued() == {}
        lines = [r.getMessage() for r in caplog.records if "skipped" in r.getMessage()]
        assert any(f"Page {page.id}" in line and "INDEXNOW_ALLOWED_HOSTS" in line for line in lines), lines
        assert all(r.exc_info is None for r in caplog.records)
        assert site.app.test_client().get("/indexnow/status.json").get_json()["skipped_events_24h"] >= 1


def test_a_broken_cache_never_reaches_the_sender(make_app) -> None:
    for site in site_app(make_app, INDEXNOW_CACHE_TYPE="RedisCache",
                         INDEXNOW_CACHE_REDIS_URL="redis://127.0.0.1:9/0"):
        site.db.session.add(site.Page(slug="no-cache"))
        site.db.session.commit()  # the URL cannot be built and the count cannot be kept: no exception
        assert site.db.session.scalars(sa.select(site.Page.slug)).all() == ["no-cache"]
        assert site.app.test_client().get("/indexnow/status.json").get_json()["skipped_events_24h"] is None


@pytest.mark.parametrize(("value", "expected"), [
    (None, None), ("", None), ("https://www.example.org", BASE), ("https://WWW.Example.org/", BASE),
    ("http://example.org:8080", "http://example.org:8080"),
])
def test_valid_base_urls(backend: str, value: Any, expected: Any) -> None:
    assert load_settings({"INDEXNOW_BASE_URL": value}).base_url == expected


@pytest.mark.parametrize("value", [
    "www.example.org", "ftp://example.org", "https://", "https://example.org/blog",
    "https://user:pw@example.org", "https://example.org/?a=1", "https://example.org:99999", 42,
])
def test_bad_base_urls_name_the_key(backend: str, value: Any) -> None:
    with pytest.raises(ConfigurationError, match="INDEXNOW_BASE_URL"):
        load_settings({"INDEXNOW_BASE_URL": value})
