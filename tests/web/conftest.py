"""Helpers for the web tests: an app whose status page is open, tokens, rows."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from typing import Any

import pytest
import sqlalchemy as sa
from flask import Flask
from flask.testing import FlaskClient

from flask_indexnow import IndexNow
from flask_indexnow.status import csrf

PREFIX = "/indexnow"
_TOKEN_RE = re.compile(rf'name="{csrf.FIELD}" value="([^"]*)"')


def extension(app: Flask) -> IndexNow:
    return app.extensions["indexnow"].extension  # type: ignore[no-any-return]


def allow(app: Flask, answer: Any = True) -> Flask:
    """Register a status_auth callback on ``app`` that returns ``answer``."""
    extension(app).status_auth(lambda: answer)
    return app


def page_token(client: FlaskClient, prefix: str = PREFIX) -> str:
    """Load the status page like a browser and return its form token."""
    response = client.get(prefix + "/")
    assert response.status_code == 200, response.data[:500]
    match = _TOKEN_RE.search(response.get_data(as_text=True))
    assert match and match.group(1), "the page carries no CSRF token"
    return match.group(1)


def insert(app: Flask, model: str, *rows: dict[str, Any]) -> None:
    """Write rows straight into one of the extension's tables (any content, even hostile)."""
    state = app.extensions["indexnow"]
    table = getattr(state.models, model).__table__
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for row in rows:  # an executemany takes its columns from the first row: group by columns
        groups.setdefault(tuple(sorted(row)), []).append(row)
    with app.app_context(), state.db.engine.begin() as connection:
        for group in groups.values():
            connection.execute(sa.insert(table), group)


def history_row(url: str, status: str = "success", *, when: datetime, http_status: int | None = 200,
                host: str | None = None, action: str = "update", error: str | None = None) -> dict[str, Any]:
    return {
        "host": host or url.split("/")[2], "url": url, "action": action, "status": status,
        "http_status": http_status, "error": error, "attempts": 1, "created_at": when,
    }


def queue_row(url: str, status: str = "pending", *, when: datetime, host: str | None = None,
              action: str = "update", attempts: int = 0, error: str | None = None,
              http_status: int | None = None) -> dict[str, Any]:
    from flask_indexnow.models import url_hash

    return {
        "host": host or url.split("/")[2], "url": url, "url_hash": url_hash(url), "action": action,
        "status": status, "attempts": attempts, "available_at": when, "last_error": error,
        "last_http_status": http_status, "created_at": when, "updated_at": when,
    }


@pytest.fixture
def status_app(make_app: Callable[..., Flask]) -> Flask:
    """An app (on each backend) whose status page lets everyone in.

    Its allow-list is closed, as a healthy site's is: an open one would make
    every verdict "Needs attention".
    """
    return allow(make_app(INDEXNOW_ALLOWED_HOSTS=["example.com"]))
