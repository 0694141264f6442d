"""Stale claims are taken back; a delivery never touches a row it no longer owns (SPEC §4 step 1)."""

from __future__ import annotations

import secrets
from datetime import timedelta

import pytest
import sqlalchemy as sa

from flask_indexnow.delivery import worker

from ..endpoint_server import Reply
from .conftest import ext, history_rows, queue_rows, state_of

pytestmark = pytest.mark.every_backend  # claims and row locks differ by database

STALE = 900


def _claim(app, clock, limit: int = 100) -> list[worker.Claimed]:
    """Claim rows the way a pass does, as a worker that then dies would."""
    state = state_of(app)
    return worker.claim(state, state.engine(), limit, clock.now, secrets.token_hex(16))


def test_a_stale_processing_row_goes_back_to_pending_and_is_delivered(make_app, endpoint, clock):
    app = make_app(INDEXNOW_STALE_AFTER=STALE)
    with app.app_context():
        ext(app).enqueue("https://example.com/old")
        assert len(_claim(app, clock)) == 1  # this worker dies mid-batch
        clock.advance(STALE - 300)
        ext(app).enqueue("https://example.com/young")
        _claim(app, clock)  # claimed 300s ago when the pass below runs
        clock.advance(300 + 1)
        young_before = queue_rows(app, url="https://example.com/young")
        result = ext(app).process_queue()
    assert (result.reset_stale, result.claimed, result.succeeded) == (1, 1, 1)
    assert endpoint.urls_received() == ["https://example.com/old"]
    assert queue_rows(app, url="https://example.com/young") == young_before
    assert young_before[0]["status"] == "processing"
    assert [(h.url, h.status) for h in history_rows(app)] == [("https://example.com/old", "success")]


def test_a_row_claimed_exactly_stale_after_ago_is_left_alone(make_app, endpoint, clock):
    app = make_app(INDEXNOW_STALE_AFTER=STALE)
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
        _claim(app, clock)
        clock.advance(STALE)
        assert ext(app).process_queue().reset_stale == 0
        clock.advance(1)
        assert ext(app).process_queue().reset_stale == 1


def test_pass_result_fields(make_app, endpoint, clock):
    app = make_app(INDEXNOW_STALE_AFTER=STALE, INDEXNOW_MAX_ATTEMPTS=2)

    def decide(request):
        url = request.json["urlList"][0]
        return {"ok": Reply(200), "tmp": Reply(503), "bad": Reply(403)}[url.rsplit("/", 1)[1].split("-")[0]]

    endpoint.decide = decide
    with app.app_context():
        ext(app).enqueue_many(["https://ok.example.com/ok-1", "https://ok.example.com/ok-2"])
        ext(app).enqueue("https://tmp.example.com/tmp-1")
        ext(app).enqueue("https://bad.example.com/bad-1")
        ext(app).enqueue("https://tmp2.example.com/tmp-2")
        state = state_of(app)
        queue = state.models.Queue.__table__
        with state.engine().begin() as connection:  # one attempt already spent: this one is the last
            connection.execute(queue.update().where(queue.c.host == "tmp2.example.com").values(attempts=1))
        ext(app).enqueue("https://stale.example.com/ok-3")
        stale = [c for c in _claim(app, clock) if c.host == "stale.example.com"]
        with state.engine().begin() as connection:  # only the stale row stays claimed
            connection.execute(queue.update().where(queue.c.host != "stale.example.com")
                               .values(status="pending", claim_token=None, claimed_at=None))
        assert stale
        clock.advance(STALE + 1)
        result = ext(app).process_queue()
    assert result.as_dict() == {
        "claimed": 6, "succeeded": 3, "retried": 1, "failed": 2, "reset_stale": 1, "dry_run": 0,
        "requests": 5, "released": 0, "skipped": 0, "skipped_reason": None, "paused_until": None,
    }
    assert str(result) == "claimed 6, succeeded 3, retried 1, failed 2, stale reset 1"


def test_pass_result_when_there_is_nothing_to_do(make_app, endpoint, clock):
    app = make_app()
    with app.app_context():
        result = ext(app).process_queue()
    assert (result.claimed, result.succeeded, result.retried, result.failed, result.reset_stale,
            result.skipped_reason) == (0, 0, 0, 0, 0, None)
    assert endpoint.received == []


@pytest.mark.parametrize("limit", [0, -1, 1.5, True, "3"])
def test_a_bad_limit_is_refused(make_app, endpoint, clock, limit):
    app = make_app()
    with app.app_context():
        with pytest.raises(ValueError, match="limit"):
            ext(app).process_queue(limit)


def test_limit_and_oldest_first(make_app, endpoint, clock):
    app = make_app(INDEXNOW_BATCH_SIZE=2)
    with app.app_context():
        for i in range(5):
            ext(app).enqueue(f"https://example.com/{i}")
            clock.advance(1)
        ext(app).enqueue("https://example.com/early", available_at=clock.now - timedelta(hours=1))
        assert ext(app).process_queue().claimed == 2
        assert ext(app).process_queue(limit=3).claimed == 3
        assert ext(app).process_queue(limit=10).claimed == 1
    # Oldest first: available_at, then id ("early" asked for a past time: it is due now, queued last).
    batches = [set(request.json["urlList"]) for request in endpoint.received]
    assert batches == [
        {"https://example.com/0", "https://example.com/1"},
        {"https://example.com/2", "https://example.com/3", "https://example.com/4"},
        {"https://example.com/early"},
    ]


@pytest.mark.parametrize("reply", [Reply(200), Reply(400), Reply(503)])
def test_a_delivery_whose_claim_was_taken_over_leaves_the_new_owner_alone(make_app, endpoint, clock, reply):
    """Pass A is slow; its claim goes stale and pass B claims the row. A's answer must not touch B's row."""
    app = make_app(INDEXNOW_STALE_AFTER=STALE)
    taken: list[worker.Claimed] = []
    tokens: list[str] = []

    def decide(request):
        with app.app_context():
            clock.advance(STALE + 1)
            state = state_of(app)
            assert worker.reset_stale(state, state.engine(), clock.now) == 1
            tokens.append(secrets.token_hex(16))
            taken.extend(worker.claim(state, state.engine(), 10, clock.now, tokens[0]))
        return reply

    endpoint.decide = decide
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
        result = ext(app).process_queue()
    assert [c.url for c in taken] == ["https://example.com/a"]
    [row] = queue_rows(app)
    assert (row["status"], row["claim_token"], row["attempts"]) == ("processing", tokens[0], 0)
    assert row["last_error"] is None
    assert (result.retried, result.failed) == (0, 0)
    # The new owner finishes normally.
    with app.app_context():
        state = state_of(app)
        answer = worker.Answer("success", 200, None, None, 0.01)
        worker.finish(state, state.engine(), tokens[0], taken, answer, worker.PassResult())
    assert queue_rows(app) == []


def test_a_pass_that_fails_midway_gives_its_rows_back(make_app, endpoint, clock):
    """The history table disappears during the first POST: the pass raises, nothing stays claimed."""
    app = make_app()
    state = state_of(app)
    history = state.models.History.__table__.name
    hidden = f"{history}_hidden"
    calls: list[int] = []

    def decide(request):
        if not calls:
            with app.app_context(), state.engine().begin() as connection:
                connection.exec_driver_sql(f"ALTER TABLE {history} RENAME TO {hidden}")
        calls.append(1)
        return Reply(200)

    endpoint.decide = decide
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
        ext(app).enqueue("https://other.org/b")
        before = {row["url"]: row for row in queue_rows(app)}
        try:
            with pytest.raises(sa.exc.DBAPIError, match=history):
                ext(app).process_queue()
        finally:
            with state.engine().begin() as connection:
                connection.exec_driver_sql(f"ALTER TABLE {hidden} RENAME TO {history}")
    assert len(calls) == 1  # the second host was not sent
    for row in queue_rows(app):
        assert (row["status"], row["claim_token"], row["claimed_at"], row["attempts"]) == ("pending", None, None, 0)
        assert row["available_at"] == before[row["url"]]["available_at"]
    with app.app_context():
        assert ext(app).process_queue().succeeded == 2
