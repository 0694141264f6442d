"""A pass runs all its short transactions on one connection (issue 11 §2).

The sweep, the claim, every batch's outcome and the next-due read share the
connection the pass checks out; the transactions stay short (see
test_no_transaction_during_post). What can go wrong with a connection held
that long is shown here too: one the database dropped between two
transactions is replaced, and a pass that is interrupted gives its rows back
on a connection of its own.
"""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy as sa

from flask_indexnow import signals
from flask_indexnow.delivery import worker

from ..endpoint_server import Reply
from .conftest import ext, history_rows, queue_rows, state_of

pytestmark = pytest.mark.every_backend  # connections and transactions differ by database

URLS = [f"https://host{n}.example.com/page" for n in range(3)]  # three hosts: three batches, three outcomes
STALE = 60


def _count_checkouts(engine: sa.Engine) -> list[int]:
    checkouts: list[int] = []
    sa.event.listen(engine, "checkout", lambda *args: checkouts.append(1))
    return checkouts


def test_a_pass_checks_out_one_connection(make_app, endpoint, clock):
    app = make_app(INDEXNOW_STALE_AFTER=STALE)
    state = state_of(app)
    with app.app_context():
        ext(app).enqueue_many(URLS)
        engine = state.engine()
        worker.claim(state, engine, 1, clock.now, "dead-pass")  # a worker that died: the pass sweeps
        clock.advance(STALE + 1)
        checkouts = _count_checkouts(engine)
        result = ext(app).process_queue()
    assert (result.reset_stale, result.claimed, result.succeeded, result.requests) == (1, 3, 3, 3)
    assert checkouts == [1]  # sweep, claim, three outcomes and the next-due read on one connection
    assert queue_rows(app) == []


def test_an_interrupted_pass_gives_its_rows_back(make_app, endpoint, clock):
    """Ctrl-C after the first batch: the rows not sent go back to pending at once, attempts untouched."""
    app = make_app()
    state = state_of(app)

    def interrupt(sender: Any, **kwargs: Any) -> None:
        raise KeyboardInterrupt

    with app.app_context():
        ext(app).enqueue_many(URLS)
        checkouts = _count_checkouts(state.engine())
        with signals.batch_sent.connected_to(interrupt), pytest.raises(KeyboardInterrupt):
            ext(app).process_queue()
    assert checkouts == [1, 1]  # the pass's own, then a fresh one to give the rows back
    assert len(endpoint.urls_received()) == 1
    assert len(history_rows(app)) == 1
    left = queue_rows(app)
    assert len(left) == 2
    assert {(row["status"], row["attempts"], row["claim_token"], row["claimed_at"]) for row in left} == {
        ("pending", 0, None, None)
    }


def _server_id(connection: sa.Connection, backend: str) -> int:
    """The database server's id of ``connection``'s session, read without a query."""
    raw: Any = connection.connection.dbapi_connection
    return int(raw.info.backend_pid if backend == "postgresql" else raw.thread_id())


@pytest.mark.parametrize("backend", ["postgresql", "mariadb"])
def test_a_connection_dropped_during_a_post_is_replaced(make_app, endpoint, clock, backend):
    """The server ends the pass's session while a POST is out: the outcome is written on a new one."""
    app = make_app(SQLALCHEMY_ENGINE_OPTIONS={"pool_pre_ping": True})
    with app.app_context():
        engine = state_of(app).engine()
    sessions: list[int] = []
    sa.event.listen(engine, "begin", lambda connection: sessions.append(_server_id(connection, backend)))
    observer = sa.create_engine(engine.url.render_as_string(hide_password=False), poolclass=sa.pool.NullPool)
    killed: list[int] = []

    def decide(request: Any) -> Reply:
        if not killed:  # the first POST: the claim's session is the pass's
            killed.append(sessions[-1])
            with observer.connect() as connection:
                if backend == "postgresql":
                    connection.execute(sa.text("SELECT pg_terminate_backend(:id)"), {"id": killed[0]})
                else:
                    connection.execute(sa.text(f"KILL {int(killed[0])}"))
        return Reply(200)

    endpoint.decide = decide
    try:
        with app.app_context():
            ext(app).enqueue_many(URLS)
            result = ext(app).process_queue()
    finally:
        observer.dispose()
    assert (result.claimed, result.succeeded) == (3, 3)
    assert sessions[-1] != killed[0]  # the later outcomes went through a new session
    assert sorted(endpoint.urls_received()) == sorted(URLS)
    assert queue_rows(app) == []
    assert sorted((h.url, h.status) for h in history_rows(app)) == [(url, "success") for url in URLS]
