"""Issue 18 (bad input): a cached endpoint pause is input like any other.

The cache is shared by every process and outlives versions. A pause there
that is not finite used to crash every pass and the status page; a huge
finite one paused sending until the year 5138. Now such a value is ignored
(sending goes on), logged once, and the status page and status.json answer.
"""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest

from flask_indexnow import engines
from flask_indexnow.delivery import worker
from flask_indexnow.retry import MAX_RETRY_AFTER

from ..endpoint_server import Reply
from .conftest import ext, state_of

URL = "https://example.com/page"
PREFIX = "/indexnow"


def _put_pause(app, value: str) -> None:
    state = state_of(app)
    state.guarded_cache.set(worker._pause_key(state, engines.first(state)), value, timeout=3600)


def _ignored_lines(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if "unreadable endpoint pause" in r.getMessage()]


@pytest.mark.parametrize("value", [
    "inf:429", "-inf:429", "nan:429", "1e300:429", "1e300", "inf", "nan",
    "99999999999:429",  # finite: the year 5138
    "{far}:429",        # a day and an hour ahead: beyond the longest pause a process writes
    "{soon}:0", "{soon}:99999999999999999999", "{soon}:abc", "garbage", "1:2:3",
])
def test_an_unusable_cached_pause_is_ignored_and_logged_once(make_app, endpoint, clock, caplog, value):
    app = make_app(INDEXNOW_STATUS_URL_PREFIX=PREFIX)
    ext(app).status_auth(lambda: True)
    now = clock.now.timestamp()
    value = value.format(far=now + MAX_RETRY_AFTER + 3600, soon=now + 600)
    caplog.set_level(logging.WARNING, logger="flask_indexnow")
    with app.app_context():
        _put_pause(app, value)
        assert worker.endpoint_pause(state_of(app)) is None
        ext(app).enqueue(URL)
        result = ext(app).process_queue()
        assert (result.skipped_reason, result.succeeded) == (None, 1)
    assert endpoint.urls_received() == [URL]
    client = app.test_client()
    response = client.get(PREFIX + "/status.json")
    assert response.status_code == 200
    assert response.get_json()["endpoint_paused_until"] is None
    assert client.get(PREFIX + "/").status_code == 200
    lines = _ignored_lines(caplog)
    assert len(lines) == 1 and repr(value) in lines[0], lines  # once, however often it is read


def test_a_pause_up_to_the_longest_one_written_still_holds(make_app, endpoint, clock):
    """The bound is the longest pause a process writes: Retry-After's cap, or INDEXNOW_RETRY_DELAY when longer."""
    delay = 3 * 86_400
    app = make_app(INDEXNOW_RETRY_DELAY=delay)
    endpoint.script(Reply(429))
    with app.app_context():
        ext(app).enqueue(URL)
        ext(app).process_queue()
        pause = worker.endpoint_pause(state_of(app))
        assert pause is not None and pause[0] == clock.now + timedelta(seconds=delay)
        engines.first(state_of(app)).paused = None  # forget this process's copy: the cached value must answer alone
        assert worker.endpoint_pause(state_of(app)) == pause
        _put_pause(app, f"{clock.now.timestamp() + delay + 86_400:.6f}:429")
        engines.first(state_of(app)).paused = None
        assert worker.endpoint_pause(state_of(app)) is None


def test_a_cached_next_due_time_that_is_not_finite_does_not_stop_the_tick(make_app, clock):
    """The same rule for the other cached time: ``inf`` or ``nan`` read as "idle for ever"."""
    from flask_indexnow import due

    app = make_app()
    with app.app_context():
        state = state_of(app)
        for value in ("inf", "nan", float("inf"), float("nan")):
            state.guarded_cache.set(state.cache_key(due._KEY), value, timeout=60)
            state.due.idle_until = 0.0
            assert due.is_idle(state) is False, value
        state.guarded_cache.set(state.cache_key(due._KEY), clock.now.timestamp() + 30, timeout=60)
        assert due.is_idle(state) is True  # a real time still counts
