"""Issue 10.8: a long pass keeps its claims, so nothing it still holds is taken back and sent twice.

Each POST of the pass below "takes" 40 s on the movable clock, so the pass
runs far longer than INDEXNOW_STALE_AFTER (90 s). Another worker runs its
stale reset during every POST, then a whole pass of its own afterwards.
"""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa

from flask_indexnow.delivery import worker
from flask_indexnow.errors import ConfigurationError

from ..endpoint_server import Reply
from .conftest import ext, history_rows, queue_rows, state_of

pytestmark = pytest.mark.every_backend  # claims and row locks differ by database

STALE = 90
TIMEOUT = 10
LONG_POST = 40
URLS = [f"https://host{n}.example.com/page" for n in range(5)]  # five hosts: five POSTs in one pass


def test_a_pass_longer_than_stale_after_keeps_its_rows(make_app, endpoint, clock):
    app = make_app(INDEXNOW_STALE_AFTER=STALE, INDEXNOW_TIMEOUT=TIMEOUT)
    state = state_of(app)
    with app.app_context():
        engine = state.engine()
        ext(app).enqueue_many(URLS)
    taken_back: list[int] = []

    def decide(request: Any) -> Reply:
        clock.advance(LONG_POST)  # this POST took long
        taken_back.append(worker.reset_stale(state, engine, clock.now))  # another worker's step 1, meanwhile
        return Reply(200)

    endpoint.decide = decide
    started = clock.now
    with app.app_context():
        result = ext(app).process_queue()
        assert (clock.now - started).total_seconds() == LONG_POST * len(URLS) > 2 * STALE
        endpoint.decide = None
        later = ext(app).process_queue()  # the other worker's whole pass, once this one is done
    assert taken_back == [0] * len(URLS)
    assert (result.claimed, result.succeeded, result.reset_stale) == (5, 5, 0)
    assert (later.claimed, later.reset_stale) == (0, 0)
    assert sorted(endpoint.urls_received()) == sorted(URLS)  # nothing sent twice
    assert queue_rows(app) == []
    assert sorted(h.url for h in history_rows(app)) == sorted(URLS)


def test_a_refreshed_claim_is_still_taken_back_once_the_pass_is_dead(make_app, endpoint, clock):
    """Refreshing is what a running pass does: a pass that died keeps no claim alive."""
    app = make_app(INDEXNOW_STALE_AFTER=STALE, INDEXNOW_TIMEOUT=TIMEOUT)
    state = state_of(app)
    with app.app_context():
        engine = state.engine()
        ext(app).enqueue_many(URLS)
        holder = worker.ClaimHolder("dead-pass", clock.now)
        assert len(worker.claim(state, engine, 100, clock.now, holder.token)) == 5
        clock.advance(LONG_POST)
        holder.keep(state, engine)  # its last sign of life
        clock.advance(STALE)
        assert worker.reset_stale(state, engine, clock.now) == 0  # exactly STALE_AFTER: still its own
        clock.advance(1)
        assert worker.reset_stale(state, engine, clock.now) == 5


def test_a_quick_pass_writes_no_extra_statement(make_app, endpoint, clock):
    app = make_app(INDEXNOW_STALE_AFTER=STALE, INDEXNOW_TIMEOUT=TIMEOUT)
    state = state_of(app)
    stamps: list[str] = []

    def count(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if statement.lstrip().upper().startswith("UPDATE") and "claimed_at" in statement:
            stamps.append(statement)

    with app.app_context():
        ext(app).enqueue_many(URLS)
        sa.event.listen(state.engine(), "before_cursor_execute", count)
        try:
            assert ext(app).process_queue().succeeded == 5
        finally:
            sa.event.remove(state.engine(), "before_cursor_execute", count)
    assert len(stamps) == 1  # the claim itself; no refresh when the POSTs are fast


@pytest.mark.parametrize(("timeout", "stale"), [(10, 10), (11, 10), (300, 60)])  # 300: INDEXNOW_TIMEOUT's maximum
def test_a_timeout_that_can_outlive_the_claim_is_refused(make_app, timeout, stale):
    with pytest.raises(ConfigurationError, match="INDEXNOW_TIMEOUT .* must be less than INDEXNOW_STALE_AFTER"):
        make_app(INDEXNOW_TIMEOUT=timeout, INDEXNOW_STALE_AFTER=stale)
