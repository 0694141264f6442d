"""Claims are atomic: passes running at the same time never send a URL twice (SPEC §4 step 2, §10)."""

from __future__ import annotations

import secrets
import threading
from collections import Counter

import pytest
import sqlalchemy as sa

from flask_indexnow.delivery import worker

from ..endpoint_server import Reply
from ..paused import paused_after
from .conftest import ext, history_rows, queue_rows, state_of

pytestmark = pytest.mark.every_backend  # claims and row locks differ by database

THREADS = 4


@pytest.mark.parametrize("backend", ["postgresql", "mariadb", "sqlite"])
def test_concurrent_passes_never_send_a_url_twice(make_app, endpoint, clock, backend):
    app = make_app(SQLALCHEMY_ENGINE_OPTIONS={"pool_size": THREADS + 2, "pool_pre_ping": True})
    urls = [f"https://site{i % 3}.example.com/page/{i}" for i in range(240)]
    with app.app_context():
        assert ext(app).enqueue_many(urls).queued == len(urls)
    endpoint.default = Reply(200, delay=0.01)  # keeps POSTs in flight while the others claim
    barrier = threading.Barrier(THREADS)
    errors: list[BaseException] = []
    claimed: list[int] = []

    def run() -> None:
        try:
            with app.app_context():
                barrier.wait()
                while True:
                    result = ext(app).process_queue(limit=7)
                    claimed.append(result.claimed)
                    if result.claimed == 0:
                        return
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors
    assert not any(thread.is_alive() for thread in threads)
    counts = Counter(endpoint.urls_received())
    assert counts == Counter(urls)  # every URL exactly once
    assert sum(claimed) == len(urls)
    assert queue_rows(app) == []
    assert Counter(h.url for h in history_rows(app) if h.status == "success") == Counter(urls)


@pytest.mark.parametrize("backend", ["postgresql", "mariadb"])
def test_claim_skips_rows_locked_by_another_worker(make_app, endpoint, clock, backend):
    """A claim does not wait for rows another transaction holds: it takes the others (SKIP LOCKED)."""
    app = make_app()
    with app.app_context():
        ext(app).enqueue_many([f"https://example.com/{i}" for i in range(10)])
        state = state_of(app)
        queue = state.models.Queue.__table__
        other = sa.create_engine(str(state.engine().url.render_as_string(hide_password=False)))
        try:
            with other.connect() as connection:
                transaction = connection.begin()
                held = connection.execute(
                    sa.select(queue.c.id).order_by(queue.c.id).limit(4).with_for_update()
                ).scalars().all()
                mine = worker.claim(state, state.engine(), 100, clock.now, secrets.token_hex(16))
                transaction.rollback()
        finally:
            other.dispose()
    assert len(held) == 4
    assert sorted(row.id for row in mine) == sorted(set(range(min(held), min(held) + 10)) - set(held))


@pytest.mark.parametrize("backend", ["postgresql", "mariadb"])
def test_an_open_claim_locks_only_the_rows_it_takes(make_app, endpoint, clock, backend):
    """Another worker's claim, its transaction still open, leaves every other due row claimable
    (its scan follows the claim index; a sorted scan would lock every due row on MariaDB)."""
    app = make_app()
    with app.app_context():
        ext(app).enqueue_many([f"https://example.com/{i}" for i in range(10)])
        state = state_of(app)
        engine = state.engine()
    with paused_after(engine, "FOR UPDATE", lambda: worker.claim(state, engine, 3, clock.now, "a" * 32)) as held:
        second = worker.claim(state, engine, 10, clock.now, "b" * 32)
    assert len(held[0]) == 3 and len(second) == 7
    assert not {r.id for r in held[0]} & {r.id for r in second}


@pytest.mark.parametrize("backend", ["postgresql", "mariadb", "sqlite"])
def test_two_claims_never_share_a_row(make_app, endpoint, clock, backend):
    app = make_app()
    with app.app_context():
        ext(app).enqueue_many([f"https://example.com/{i}" for i in range(10)])
        state = state_of(app)
        first = worker.claim(state, state.engine(), 6, clock.now, "a" * 32)
        second = worker.claim(state, state.engine(), 6, clock.now, "b" * 32)
        third = worker.claim(state, state.engine(), 6, clock.now, "c" * 32)
    assert (len(first), len(second), len(third)) == (6, 4, 0)
    assert not {r.id for r in first} & {r.id for r in second}
    tokens = Counter(row["claim_token"] for row in queue_rows(app))
    assert tokens == {"a" * 32: 6, "b" * 32: 4}
    assert all(row["status"] == "processing" and row["claimed_at"] == clock.now for row in queue_rows(app))
