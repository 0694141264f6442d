"""Helpers shared by the delivery tests (SPEC §4 and the delivery half of §11)."""

from __future__ import annotations

import socket
from typing import Any

from flask import Flask

from flask_indexnow import IndexNow
from flask_indexnow.state import IndexNowState

from ..conftest import rows


def ext(app: Flask) -> IndexNow:
    """The IndexNow object registered on ``app``."""
    return app.extensions["indexnow"].extension  # type: ignore[no-any-return]


def state_of(app: Flask) -> IndexNowState:
    return app.extensions["indexnow"]  # type: ignore[no-any-return]


def queue_rows(app: Flask, **where: Any) -> list[dict[str, Any]]:
    """Queue rows as plain dicts, full width, for before/after comparisons."""
    return [dict(row._mapping) for row in rows(app, "Queue", **where)]


def history_rows(app: Flask, **where: Any) -> list[Any]:
    return rows(app, "History", **where)


def closed_port() -> int:
    """A loopback port nothing listens on: connecting to it is refused."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
