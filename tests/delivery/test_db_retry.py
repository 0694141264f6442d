"""The pass's short transactions are run again after a deadlock or a lock timeout.

A batch whose outcome could not be written would stay claimed until
INDEXNOW_STALE_AFTER and then be sent a second time, so ``finish`` and the
claim retry a transaction the database refused for a transient reason.
"""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from flask_indexnow import claims, retry

from .conftest import ext, queue_rows, state_of

pytestmark = pytest.mark.every_backend  # each database refuses a lock its own way


def _locked_update(connection, queue, backend: str) -> None:
    """An UPDATE of a row another transaction holds, failing fast the database's own way."""
    if backend == "postgresql":
        connection.execute(sa.text("SET LOCAL lock_timeout = '50ms'"))
    elif backend == "mariadb":
        connection.execute(sa.text("SET SESSION innodb_lock_wait_timeout = 1"))
    connection.execute(sa.update(queue).values(attempts=queue.c.attempts + 1))


def test_a_transaction_refused_for_a_lock_is_run_again(make_app, endpoint, clock, backend):
    app = make_app(SQLALCHEMY_ENGINE_OPTIONS={"connect_args": {"timeout": 0.05}} if backend == "sqlite" else {})
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
        state = state_of(app)
        engine = state.engine()
        queue = state.models.Queue.__table__
        holder = engine.connect()
        held = holder.begin()
        holder.execute(sa.update(queue).values(last_error="held"))
        tries: list[int] = []

        def work(connection) -> str:
            tries.append(1)
            if len(tries) == 1:
                try:
                    _locked_update(connection, queue, backend)
                finally:
                    held.rollback()  # the other transaction ends; the retry gets through
                    holder.close()
            connection.execute(sa.update(queue).values(attempts=queue.c.attempts + 1))
            return "done"

        assert claims.run(engine, work) == "done"
    assert len(tries) == 2
    [row] = queue_rows(app)
    assert (row["attempts"], row["last_error"]) == (1, None)  # the failed try left nothing behind


def test_other_database_errors_are_not_retried(make_app, endpoint, clock):
    app = make_app()
    tries: list[int] = []

    def work(connection) -> None:
        tries.append(1)
        connection.execute(sa.text("SELECT * FROM no_such_table_here"))

    with app.app_context():
        try:
            claims.run(state_of(app).engine(), work)
        except sa.exc.DBAPIError as exc:
            assert not retry.is_transient(exc)
        else:  # pragma: no cover
            raise AssertionError("the error was swallowed")
    assert tries == [1]
