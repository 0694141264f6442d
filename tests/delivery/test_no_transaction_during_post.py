"""No database transaction or lock is held while a POST is in flight (house rule; SPEC §4).

From inside the endpoint, while the worker waits for the answer, each test asks
the database itself whether a connection of the worker's app holds a
transaction. Each probe is first shown to see a transaction that is open.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Callable

import pytest
import sqlalchemy as sa

from ..endpoint_server import Reply
from .conftest import ext, state_of

pytestmark = pytest.mark.every_backend  # connections and transactions differ by database


def _probe(app, backend: str) -> tuple[Callable[[], int], Callable[[], object]]:
    """``count()`` of open transactions held by the app's connections, and a way to open one."""
    state = state_of(app)
    engine = state.engine()
    if backend == "sqlite":
        path = engine.url.database

        def count_sqlite() -> int:
            other = sqlite3.connect(path, timeout=0, isolation_level=None)
            try:
                other.execute("BEGIN EXCLUSIVE")  # fails while any connection holds any lock
                other.execute("ROLLBACK")
                return 0
            except sqlite3.OperationalError:
                return 1
            finally:
                other.close()

        return count_sqlite, lambda: _hold(engine, state, lock=True)

    url = engine.url.render_as_string(hide_password=False)
    observer = sa.create_engine(url, poolclass=sa.pool.NullPool)
    if backend == "postgresql":
        name = app.config["SQLALCHEMY_ENGINE_OPTIONS"]["connect_args"]["application_name"]

        def count_pg() -> int:
            with observer.connect() as connection:
                return int(connection.execute(sa.text(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                    "AND application_name = :name AND state LIKE 'idle in transaction%'"
                ), {"name": name}).scalar())

        return count_pg, lambda: _hold(engine, state, lock=False)

    # MariaDB's INNODB_TRX is a cache refreshed at most every 0.1 s: ask the locks instead.
    tables = [state.models.Queue.__table__, state.models.History.__table__, state.models.URLState.__table__]

    def count_mysql() -> int:
        with observer.connect() as connection:
            with connection.begin():
                for table in tables:
                    try:
                        connection.execute(sa.select(table.c.id).with_for_update(nowait=True)).all()
                    except sa.exc.OperationalError:
                        return 1
        return 0

    return count_mysql, lambda: _hold(engine, state, lock=False)


def _hold(engine, state, lock: bool):
    """Open a transaction on one of the app's pooled connections (the probe's control)."""
    connection = engine.connect()
    transaction = connection.begin()
    queue = state.models.Queue.__table__
    if lock:
        connection.execute(sa.update(queue).where(queue.c.id == -1).values(attempts=0))
    else:
        connection.execute(sa.select(queue.c.id).limit(1).with_for_update()).all()
    return connection, transaction


def _make(make_app, backend: str, **config):
    options: dict = {"pool_pre_ping": True}
    if backend == "postgresql":
        options["connect_args"] = {"application_name": f"indexnow-test-{uuid.uuid4().hex[:10]}"}
    app = make_app(SQLALCHEMY_ENGINE_OPTIONS=options, **config)
    return app


@pytest.mark.parametrize(
    ("replies", "posts"),
    [
        ([Reply(200)], 2),
        ([Reply(503)], 2),
        ([Reply(400), Reply(200), Reply(400)], 4),  # a split: several POSTs in a row
        ([Reply(429, headers={"Retry-After": "60"})], 1),  # the other host is released, not sent
    ],
    ids=["success", "retry", "split", "pause"],
)
def test_no_transaction_is_open_while_a_post_is_in_flight(make_app, endpoint, clock, backend, replies, posts):
    app = _make(make_app, backend)
    seen: list[int] = []
    with app.app_context():
        ext(app).enqueue_many(["https://example.com/a", "https://example.com/bad"])
        ext(app).enqueue("https://other.org/b")  # a second host: a POST after the first one's outcome
        count, hold = _probe(app, backend)
        # The control: the probe sees a transaction that is open.
        connection, transaction = hold()
        try:
            assert count() == 1
        finally:
            transaction.rollback()
            connection.close()
        assert count() == 0

        script = list(replies)

        def decide(request):
            seen.append(count())
            return script.pop(0) if script else Reply(200)

        endpoint.decide = decide
        ext(app).process_queue()
    assert seen == [0] * posts


def test_the_site_can_write_while_a_post_is_in_flight(make_app, endpoint, clock, backend):
    """A save of the site during a slow POST commits at once (it does not wait for the endpoint)."""
    app = _make(make_app, backend, INDEXNOW_TIMEOUT=5)
    written: list[str | None] = []

    def decide(request):
        with app.app_context():
            written.append(ext(app).enqueue("https://example.com/new"))
        return Reply(200)

    endpoint.decide = decide
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
        ext(app).process_queue()
    assert written == ["https://example.com/new"]
