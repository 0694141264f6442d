"""SPEC §6: two schedulers in separate processes tick at the same instant, round after
round; each due occurrence is dispatched exactly once."""

from __future__ import annotations

import multiprocessing
from collections import Counter
from datetime import datetime, timedelta, timezone

import pytest
import sqlalchemy as sa

from ..conftest import rows
from .conftest import ext
from .servers import shared_config
from .ticker import tick_in_rounds

SCHEDULES = 10
ROUNDS = 15


@pytest.mark.parametrize("backend", ["sqlite", "postgresql", "mariadb"])
def test_two_schedulers_ticking_at_once_dispatch_each_occurrence_once(make_app):
    app = make_app()
    handlers = [f"report_{n}" for n in range(SCHEDULES)]
    with app.app_context():
        for handler in handlers:
            ext(app).schedule(handler).every("1 hour").save()
    state = app.extensions["indexnow"]
    table = state.models.Schedule.__table__
    start = datetime.now(timezone.utc).replace(microsecond=0)

    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(3, timeout=120)
    results = context.Queue()
    children = [
        context.Process(target=tick_in_rounds, args=(shared_config(app), barrier, ROUNDS, results))
        for _ in range(2)
    ]
    for child in children:
        child.start()
    dispatched: list[int] = []
    try:
        for round_ in range(ROUNDS):
            # Every schedule due again, at an occurrence of its own for this round.
            due = start - timedelta(hours=1) + timedelta(seconds=round_)
            with app.app_context(), state.db.engine.begin() as connection:
                connection.execute(sa.update(table).values(next_run=due))
            barrier.wait()  # both children tick now
            barrier.wait()  # both are done
            dispatched.append(results.get(timeout=60) + results.get(timeout=60))
    finally:
        barrier.abort()
        for child in children:
            child.join(60)
            if child.is_alive():
                child.kill()
    assert [child.exitcode for child in children] == [0, 0]

    assert dispatched == [SCHEDULES] * ROUNDS  # one job per due schedule per round, whoever won
    jobs = rows(app, "Job")
    assert len(jobs) == SCHEDULES * ROUNDS
    per_occurrence = Counter(job.occurrence_key for job in jobs)
    assert len(per_occurrence) == SCHEDULES * ROUNDS and set(per_occurrence.values()) == {1}
    assert Counter(job.handler for job in jobs) == Counter(dict.fromkeys(handlers, ROUNDS))
