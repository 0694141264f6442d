"""Fixtures of the core tests."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import pytest

from ..scale.servers import PrivateRedis


@pytest.fixture
def private_redis() -> Iterator[PrivateRedis]:
    """A redis-server of the test's own (never the shared one), to freeze, stop and start again."""
    redis = PrivateRedis().start()
    yield redis
    if redis.process is not None and redis.process.poll() is None:
        os.kill(redis.process.pid, signal.SIGCONT)  # a stopped process cannot be terminated
    redis.stop()
