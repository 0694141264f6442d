"""Fixtures of the scale tests: a counting endpoint and helpers to read the tables."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from flask import Flask

from flask_indexnow import IndexNow

from .servers import CountingEndpoint

#: The databases several machines can share (SPEC §10).
SERVER_BACKENDS = ["postgresql", "mariadb"]


@pytest.fixture
def counting_endpoint() -> Iterator[CountingEndpoint]:
    server = CountingEndpoint().start()
    yield server
    server.stop()


def ext(app: Flask) -> IndexNow:
    return app.extensions["indexnow"].extension  # type: ignore[no-any-return]


def count(app: Flask, model: str = "Queue", **where: Any) -> int:
    """Rows of one of the extension's tables, without loading them."""
    state = app.extensions["indexnow"]
    table = getattr(state.models, model).__table__
    query = sa.select(sa.func.count()).select_from(table).where(*(table.c[k] == v for k, v in where.items()))
    with app.app_context(), state.db.engine.connect() as connection:
        return int(connection.execute(query).scalar_one())


def history_by_url(app: Flask) -> dict[str, list[Any]]:
    """History rows grouped by URL, in the order they were written."""
    state = app.extensions["indexnow"]
    table = state.models.History.__table__
    grouped: dict[str, list[Any]] = {}
    with app.app_context(), state.db.engine.connect() as connection:
        for row in connection.execute(sa.select(table).order_by(table.c.id)):
            grouped.setdefault(row.url, []).append(row)
    return grouped
