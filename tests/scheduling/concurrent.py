"""Children for the concurrency tests, started by multiprocessing's fork server (or "spawn").

Each child builds its own app (tests.scheduling.worker_app) on the test's
database and table prefix, waits at a shared barrier so that all of them hit
the database at the same moment, and reports what it did through a queue.
"""

from __future__ import annotations

import functools
import traceback
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from flask_indexnow import clock
from flask_indexnow.scheduling import jobs, scheduler
from flask_indexnow.state import get_state

from .worker_app import create_app


def reporting(fn: Callable[..., Any]) -> Callable[..., None]:
    """Put what ``fn`` returns on the results queue (its last argument), or the traceback."""

    @functools.wraps(fn)
    def wrapper(*args: Any) -> None:
        results = args[-1]
        try:
            results.put(fn(*args[:-1]))
        except BaseException:
            results.put("error in a worker process:\n" + traceback.format_exc())

    return wrapper


@reporting
def tick_in_step(database_url: str, prefix: str, marks: str, barrier: Any, start: datetime, steps: int) -> int:
    """Tick the scheduler once a simulated minute, in lockstep with the other children."""
    now = [start]
    clock.set_source(lambda: now[0])
    app = create_app(database_url, prefix, marks)
    dispatched = 0
    with app.app_context():
        state = get_state()
        for step in range(1, steps + 1):
            now[0] = start + timedelta(minutes=step, seconds=1)
            barrier.wait(timeout=60)
            dispatched += scheduler.tick(state)
    return dispatched


@reporting
def run_jobs(database_url: str, prefix: str, marks: str, barrier: Any) -> int:
    """Run due jobs until none is left, racing the other children for each claim."""
    app = create_app(database_url, prefix, marks)
    with app.app_context():
        state = get_state()
        barrier.wait(timeout=60)
        result = jobs.run_due(state, limit=100_000)
    return result.completed


@reporting
def control_at_once(database_url: str, prefix: str, marks: str, barrier: Any, control: str,
                    name: str) -> tuple[bool, int | None]:
    """Call one operator control (``trigger`` or ``resume_catch_up``) at the same moment as the others."""
    from flask_indexnow.scheduling import controls

    app = create_app(database_url, prefix, marks)
    with app.app_context():
        state = get_state()
        state.engine().connect().close()  # connected before the barrier: the calls meet at the database
        barrier.wait(timeout=60)
        if control == "trigger":
            result = controls.trigger(state, name)
        else:
            result = controls.resume(state, name, catch_up=True)
    return result.changed, result.job_id
