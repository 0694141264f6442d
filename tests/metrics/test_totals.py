"""The delivery totals (indexnow_totals): one upsert per outcome, in the outcome's transaction, on every database."""

from __future__ import annotations

import secrets
import threading
from collections import Counter

import pytest
import sqlalchemy as sa

from flask_indexnow import totals
from flask_indexnow.delivery import worker
from flask_indexnow.delivery.endpoint import Answer

from ..conftest import rows
from ..endpoint_server import Reply

THREADS = 4


def ext(app):
    return app.extensions["indexnow"].extension


def state_of(app):
    return app.extensions["indexnow"]


def counters(app) -> dict[tuple[str, str], int]:
    state = state_of(app)
    with app.app_context(), state.engine().connect() as connection:
        return {(engine, status): count for engine, status, count, _ in totals.read(connection, state.models.totals)}


@pytest.mark.every_backend  # each database has its own upsert
def test_record_adds_any_status_and_keeps_the_latest_time(app, clock):
    state = state_of(app)
    table = state.models.totals
    earlier = clock.now
    later = clock.advance(60)
    one, two = "https://e.example/indexnow", "https://f.example/indexnow"
    with state.engine().begin() as connection:
        totals.record(connection, table, {(one, "success"): 3, (one, "skipped"): 2, (one, "retry"): 0,
                                          (two, "failed"): 1}, later)
    with state.engine().begin() as connection:  # a worker that commits later with an earlier answer
        totals.record(connection, table, {(one, "success"): 4, (one, "later_status"): 1}, earlier)
    with state.engine().connect() as connection:
        found = totals.read(connection, table)
    assert [(e, s, n) for e, s, n, _ in found] == [
        (one, "later_status", 1), (one, "skipped", 2), (one, "success", 7), (two, "failed", 1),
    ]  # a zero count writes no row
    assert {(e, s): at for e, s, _, at in found}[(one, "success")] == later  # the time never goes back


@pytest.mark.parametrize("backend", ["postgresql", "mariadb", "sqlite"])
def test_concurrent_workers_count_every_url_once(make_app, endpoint, clock, backend):
    """Workers finishing batches at once all add to the same counter rows: no deadlock, nothing lost."""
    app = make_app(SQLALCHEMY_ENGINE_OPTIONS={"pool_size": THREADS + 2, "pool_pre_ping": True},
                   INDEXNOW_MAX_ATTEMPTS=1)
    urls = [f"https://site{i % 3}.example.com/page/{i}" for i in range(240)]
    with app.app_context():
        ext(app).enqueue_many(urls)
    # Every third POST is refused for good: two statuses, so each outcome upserts its own rows.
    endpoint.script(*[Reply(400 if n % 3 == 0 else 200, delay=0.005) for n in range(200)])
    barrier = threading.Barrier(THREADS)
    errors: list[BaseException] = []

    def run() -> None:
        try:
            with app.app_context():
                barrier.wait()
                while ext(app).process_queue(limit=5).claimed:
                    pass
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=180)
    assert not errors, errors
    history = Counter(h.status for h in rows(app, "History"))
    assert sum(history.values()) == len(urls)
    assert counters(app) == {(endpoint.url, status): count for status, count in history.items()}


def test_the_totals_are_written_in_the_outcome_transaction(app, endpoint, clock):
    """When the totals cannot be written, the outcome is not written either: nothing counted twice or lost."""
    state = state_of(app)
    ext(app).enqueue("https://example.com/a")
    state.models.totals.drop(state.engine())
    try:
        with pytest.raises(sa.exc.OperationalError):
            ext(app).process_queue()
        assert rows(app, "History") == []
        assert [r.status for r in rows(app)] == ["pending"]  # given back, to be sent again
    finally:
        state.models.totals.create(state.engine())
    assert ext(app).process_queue().succeeded == 1
    assert counters(app) == {(endpoint.url, "success"): 1}


@pytest.mark.every_backend  # PostgreSQL counts in the batch's statement, the others after it
@pytest.mark.parametrize("outcome", ["success", "retry"])
def test_rows_whose_claim_was_taken_are_counted_with_their_history(make_app, endpoint, clock, outcome):
    """A newer event took one row's claim during the POST: its attempt is history, and counted, all the same."""
    app = make_app(INDEXNOW_MAX_ATTEMPTS=3)
    state = state_of(app)
    urls = ["https://example.com/a", "https://example.com/b", "https://example.com/c"]
    with app.app_context():
        ext(app).enqueue_many(urls)
        token = secrets.token_hex(16)
        claimed = worker.claim(state, state.engine(), 10, clock.now, token)
        ext(app).enqueue(urls[1])  # resets that row to pending: the claim is no longer ours
        answer = Answer(outcome, 200 if outcome == "success" else 503, None, None, 0.01)
        worker.finish(state, state.engine(), token, claimed, answer, worker.PassResult())
    history = Counter(h.status for h in rows(app, "History"))
    assert history == {outcome: 3}
    assert counters(app) == {(endpoint.url, outcome): 3}
    assert [r.url for r in rows(app)] == ([urls[1]] if outcome == "success" else urls)  # the reset row stays
