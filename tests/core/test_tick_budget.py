"""Issue 9.9: a tick returns within INDEXNOW_TICK_BUDGET whatever the endpoint does.

The POST under way when the budget runs out is cut short and counts as an
attempt (the endpoint did not answer in time); the batches whose turn never
came go back to ``pending`` as they were, attempts untouched. The same test
under a real gunicorn is in tests/scale/test_gunicorn.py.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from flask import Flask

from flask_indexnow import IndexNow
from flask_indexnow.config import DEFAULTS, MAX_TICK_BUDGET
from flask_indexnow.delivery.worker import MIN_POST_TIME, process_queue
from flask_indexnow.errors import ConfigurationError

from ..conftest import rows
from ..silent_server import SilentServer

#: Long enough for a tick's own start (a fresh engine's first connection, the claim) on a loaded
#: machine: with less than MIN_POST_TIME left after it, no POST would start at all.
BUDGET = 1.5
#: The silent endpoint's POSTs would wait this long without the budget.
TIMEOUT = 10
HOSTS = ["a.example.com", "b.example.com", "c.example.com"]


def ext(app: Flask) -> IndexNow:
    return app.extensions["indexnow"].extension  # type: ignore[no-any-return]


@pytest.fixture
def silent() -> Iterator[SilentServer]:
    with SilentServer() as server:
        yield server


def test_a_tick_returns_within_its_budget_and_gives_unsent_rows_back(make_app, silent):
    app = make_app(INDEXNOW_ENDPOINT=silent.url, INDEXNOW_TIMEOUT=TIMEOUT, INDEXNOW_TICK_BUDGET=BUDGET)
    with app.app_context():
        for host in HOSTS:
            ext(app).enqueue(f"https://{host}/page")
        queued = {row.url: row.available_at for row in rows(app)}
        started = time.monotonic()
        result = ext(app).tick()
        took = time.monotonic() - started
    # Without the budget, the first POST alone would wait TIMEOUT s (and three of them 3 x TIMEOUT).
    # The bound leaves room for a loaded machine's slow writes after the cut (3.6 s seen at load 16).
    assert took < TIMEOUT - 4, took
    assert (result.claimed, result.requests, result.retried, result.released) == (3, 1, 1, 2)
    assert silent.accepted() == 1
    after = rows(app)
    assert {row.status for row in after} == {"pending"}
    assert {row.claim_token for row in after} == {None}
    [cut] = [row for row in after if row.attempts == 1]
    assert "tick budget" in cut.last_error  # the POST that was cut short: one attempt, retried later
    given_back = [row for row in after if row.attempts == 0]
    assert len(given_back) == 2
    for row in given_back:  # untouched: due as before, no error, no history
        assert (row.available_at, row.last_error, row.last_http_status) == (queued[row.url], None, None)
    assert {h.url for h in rows(app, "History")} == {cut.url}


# Past the deadline; or with a sliver of it left (less than MIN_POST_TIME: what a POST cut by the
# budget can leave), where a POST could only fail at once and would spend an attempt for nothing.
@pytest.mark.parametrize("left", [0.0, MIN_POST_TIME * 0.6], ids=["none", "a sliver"])
def test_rows_reached_without_time_for_a_post_are_given_back_without_one(make_app, silent, left):
    app = make_app(INDEXNOW_ENDPOINT=silent.url)
    with app.app_context():
        for host in HOSTS:
            ext(app).enqueue(f"https://{host}/page")
        before = {row.url: (row.available_at, row.attempts) for row in rows(app)}
        result = process_queue(app.extensions["indexnow"], deadline=time.monotonic() + left)
    assert (result.claimed, result.requests, result.released, result.retried) == (3, 0, 3, 0)
    assert silent.accepted() == 0
    assert {row.url: (row.available_at, row.attempts) for row in rows(app)} == before
    assert {row.status for row in rows(app)} == {"pending"}
    assert rows(app, "History") == []


def test_the_next_tick_sends_what_the_last_one_gave_back(make_app, endpoint, silent):
    app = make_app(INDEXNOW_ENDPOINT=silent.url, INDEXNOW_TICK_BUDGET=BUDGET, INDEXNOW_TIMEOUT=5)
    with app.app_context():
        for host in HOSTS:
            ext(app).enqueue(f"https://{host}/page")
        ext(app).tick()
    # The endpoint answers again; a process pointed at it (same tables) picks the rows up.
    fixed = make_app(create_tables=False, INDEXNOW_TABLE_PREFIX=app.config["INDEXNOW_TABLE_PREFIX"],
                     INDEXNOW_ENDPOINT=endpoint.url)
    with fixed.app_context():
        result = ext(fixed).tick()
    assert result is not None and result.succeeded == 2  # the two given back; the cut one waits for its retry
    assert [row.attempts for row in rows(fixed)] == [1]


def test_the_budget_setting():
    assert DEFAULTS["INDEXNOW_TICK_BUDGET"][0] == 5
    assert MAX_TICK_BUDGET == 300


@pytest.mark.parametrize("value", [0, -1, MAX_TICK_BUDGET + 1, "soon", float("inf")])
def test_a_bad_budget_is_refused(make_app, value):
    with pytest.raises(ConfigurationError, match="INDEXNOW_TICK_BUDGET"):
        make_app(INDEXNOW_TICK_BUDGET=value)
