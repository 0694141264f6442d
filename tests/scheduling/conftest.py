"""Fixtures shared by the scheduling tests: a fresh extension and an app at a fixed time."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone

import pytest
from flask import Flask

from flask_indexnow import IndexNow

from ..conftest import FakeClock

UTC = timezone.utc
#: Every scheduling test starts at this instant (the clock fixture is set to it).
START = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)


@pytest.fixture
def ext() -> IndexNow:
    return IndexNow()


@pytest.fixture
def site(make_app, ext: IndexNow, clock: FakeClock) -> Iterator[Flask]:
    clock.set(START)
    app: Flask = make_app(indexnow=ext)
    with app.app_context():
        yield app
