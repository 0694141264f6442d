"""Figure 12: each schedule's last outcome (status page, status.json, metrics) with a long history.

The built-in ``indexnow.process_queue`` alone records 1,440 occurrences a day.
:func:`flask_indexnow.scheduling.history.latest` finds each schedule's newest
one with one descent of the (schedule, id) index per schedule, so its cost
must not grow with the history. Two sites with the same 20 schedules run side
by side: one with ``big`` occurrences, one with ``small``; the ratio is the
growth. The note gives, for scale, a GROUP BY over the same big history (what
reading "the newest per schedule" naively costs).
"""

from __future__ import annotations

import functools
import time
from datetime import timedelta

import sqlalchemy as sa

from flask_indexnow.scheduling.history import latest

from .harness import Figure, backend_name, interleave, median, ms
from .site import Site, build, utcnow

SCHEDULES = 20
CHUNK = 5_000


def _site(database_url: str, occurrences: int) -> Site:
    site = build(database_url, "http://127.0.0.1:9/indexnow", INDEXNOW_SCHEDULER_ENABLED=False)
    now = utcnow()
    with site.app.app_context():
        for n in range(SCHEDULES):
            site.indexnow.schedule("report", {"n": n}, name=f"schedule-{n:02d}").every("1 minute").save()
    runs = site.state.models.schedule_run
    with site.engine().begin() as connection:
        rows = [{"schedule": f"schedule-{n % SCHEDULES:02d}", "outcome": "dispatched",
                 "due_at": now - timedelta(minutes=occurrences - n), "job_id": None,
                 "created_at": now - timedelta(minutes=occurrences - n)} for n in range(occurrences)]
        for start in range(0, len(rows), CHUNK):
            connection.execute(sa.insert(runs), rows[start:start + CHUNK])
    if site.engine().dialect.name == "postgresql":
        with site.engine().connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            connection.execute(sa.text(f'ANALYZE "{runs.name}"'))
    return site


def _latest(site: Site, repeat: int) -> float:
    with site.app.app_context(), site.engine().connect() as connection:
        started = time.perf_counter()
        for _ in range(repeat):
            found = latest(site.state, connection=connection)
        elapsed = (time.perf_counter() - started) / repeat
    assert len(found) == SCHEDULES, found
    return elapsed


def _group_by(site: Site, repeat: int) -> float:
    runs = site.state.models.schedule_run
    query = sa.select(runs.c.schedule, sa.func.max(runs.c.id)).group_by(runs.c.schedule)
    with site.engine().connect() as connection:
        started = time.perf_counter()
        for _ in range(repeat):
            connection.execute(query).all()
        return (time.perf_counter() - started) / repeat


def last_outcome(number: int, database_url: str, big: int, small: int, rounds: int, repeat: int = 20) -> Figure:
    sites = {"big": _site(database_url, big), "small": _site(database_url, small)}
    timings = interleave({name: functools.partial(_latest, site, repeat) for name, site in sites.items()}, rounds)
    ours, floor = median(timings["big"]), median(timings["small"])
    grouped = median([_group_by(sites["big"], repeat) for _ in range(rounds)])
    ratio = ours / floor
    return Figure(
        number, f"last outcome of {SCHEDULES} schedules, {big:,} vs {small:,} occurrences ({backend_name(database_url)})",
        ms(ours), ms(floor), ratio, "<= 2", ratio <= 2,
        f"schedules: {rounds} interleaved rounds of {repeat} look-ups per site; a GROUP BY over the "
        f"{big:,} occurrences takes {ms(grouped)} for comparison.",
    )
