"""Fixtures of the verification tests: an app with INDEXNOW_VERIFY and the site of ``site.py``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from flask import Flask

from ..conftest import rows
from ..delivery.conftest import ext
from .site import BASE, add_site


@pytest.fixture
def site(make_app: Any, endpoint: Any) -> Callable[..., Flask]:
    """``site(**config)``: an app in ``"app"`` mode (unless told otherwise) with the test site's views."""

    def build(*, robots: str | None = "User-agent: *\nDisallow: /private/\n", **config: Any) -> Flask:
        config.setdefault("INDEXNOW_VERIFY", "app")
        return add_site(make_app(**config), robots=robots)

    return build


def send(app: Flask, *paths: str) -> Any:
    """Queue the site's ``paths`` and run one pass; returns the pass result."""
    with app.app_context():
        for path in paths:
            ext(app).enqueue(BASE + path)
        return ext(app).process_queue()


def skipped(app: Flask) -> dict[str, str]:
    """URL → the error of its ``skipped`` history row."""
    return {row.url: row.error for row in rows(app, "History", status="skipped")}
