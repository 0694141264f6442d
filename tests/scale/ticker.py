"""Run in child processes by the scheduler test: tick at the same instant as a rival."""

from __future__ import annotations

import json
import os
from typing import Any

from .siteapp import CONFIG_ENV, create_app


def tick_in_rounds(config: dict[str, Any], barrier: Any, rounds: int, results: Any) -> None:
    """Each round: wait at the barrier with the rival and the test, ``indexnow.scheduler.tick()``, report."""
    os.environ[CONFIG_ENV] = json.dumps(config)
    app = create_app()
    with app.app_context():
        indexnow = app.extensions["indexnow"].extension
        for _ in range(rounds):
            barrier.wait()
            results.put(indexnow.scheduler.tick())
            barrier.wait()
