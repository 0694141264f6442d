"""A batch answered 400/422 is split in halves so only the URLs really rejected fail (SPEC §11)."""

from __future__ import annotations

import pytest

from flask_indexnow.delivery.worker import SPLIT_REQUEST_BUDGET

from ..endpoint_server import Reply
from .conftest import ext, history_rows, queue_rows


def _reject_bad(status: int):
    def decide(request):
        urls = request.json["urlList"]
        return Reply(status, body=b"invalid url") if any("bad" in url for url in urls) else Reply(200)
    return decide


@pytest.mark.parametrize("status", [400, 422])
def test_only_the_rejected_urls_fail(make_app, endpoint, clock, status):
    endpoint.decide = _reject_bad(status)
    urls = [f"https://example.com/{'bad' if i in (3, 11) else 'ok'}/{i}" for i in range(16)]
    app = make_app(INDEXNOW_BATCH_SIZE=100)
    with app.app_context():
        for url in urls:  # one by one: the batch is in this order
            ext(app).enqueue(url)
        result = ext(app).process_queue()
    assert (result.claimed, result.succeeded, result.failed, result.retried) == (16, 14, 2, 0)
    failed = queue_rows(app)
    assert sorted(row["url"] for row in failed) == ["https://example.com/bad/11", "https://example.com/bad/3"]
    assert all((row["status"], row["last_http_status"]) == ("failed", status) for row in failed)
    assert all(row["last_error"] == f"HTTP {status}: invalid url" for row in failed)
    history = history_rows(app)
    assert sorted((h.url, h.status) for h in history) == sorted(
        (url, "failed" if "bad" in url else "success") for url in urls
    )
    # Every good URL was accepted exactly once; the first request carried all 16.
    accepted = [u for r in endpoint.received if "bad" not in str(r.json["urlList"]) for u in r.json["urlList"]]
    assert sorted(accepted) == sorted(u for u in urls if "bad" not in u)
    assert len(endpoint.received[0].json["urlList"]) == 16
    # Halving, depth first: 16 → 8 → 4 → 2 (ok) + 2 → 1 + 1; 4 (ok); then the same for the second 8.
    assert [len(r.json["urlList"]) for r in endpoint.received] == [16, 8, 4, 2, 2, 1, 1, 4, 8, 4, 2, 2, 1, 1, 4]
    assert result.requests == len(endpoint.received) == 15


def test_a_single_rejected_url_is_not_split(make_app, endpoint, clock):
    endpoint.default = Reply(400)
    app = make_app()
    with app.app_context():
        ext(app).enqueue("https://example.com/bad")
        result = ext(app).process_queue()
    assert (result.requests, result.failed) == (1, 1)


def test_all_rejected_halves_fail_and_nothing_is_retried(make_app, endpoint, clock):
    endpoint.default = Reply(422)
    app = make_app()
    with app.app_context():
        ext(app).enqueue_many([f"https://example.com/bad/{i}" for i in range(4)])
        result = ext(app).process_queue()
    # 4 → 2+2 → 1+1+1+1: 1 + 2 + 4 requests, every URL failed once.
    assert (result.requests, result.failed, result.succeeded) == (7, 4, 0)
    assert [h.status for h in history_rows(app)] == ["failed"] * 4
    assert [row["attempts"] for row in queue_rows(app)] == [1] * 4


def test_a_half_answered_with_a_temporary_error_is_retried(make_app, endpoint, clock):
    answers = iter([Reply(400), Reply(503), Reply(200)])
    endpoint.decide = lambda request: next(answers)
    app = make_app(INDEXNOW_RETRY_DELAY=60)
    with app.app_context():
        ext(app).enqueue_many([f"https://example.com/{i}" for i in range(4)])
        result = ext(app).process_queue()
    assert (result.requests, result.retried, result.succeeded, result.failed) == (3, 2, 2, 0)
    first_half = endpoint.received[1].json["urlList"]
    assert sorted(row["url"] for row in queue_rows(app)) == sorted(first_half)
    assert all(row["status"] == "pending" and row["last_http_status"] == 503 for row in queue_rows(app))


def test_a_429_while_splitting_pauses_and_releases_the_rest(make_app, endpoint, clock):
    answers = iter([Reply(400), Reply(429, headers={"Retry-After": "120"})])
    endpoint.decide = lambda request: next(answers, Reply(200))
    app = make_app(INDEXNOW_RETRY_DELAY=60)
    with app.app_context():
        ext(app).enqueue_many([f"https://example.com/{i}" for i in range(4)])
        result = ext(app).process_queue()
    assert (result.requests, result.retried, result.released) == (2, 2, 2)
    first_half = set(endpoint.received[1].json["urlList"])
    assert {row["url"]: row["attempts"] for row in queue_rows(app)} == {
        f"https://example.com/{i}": 1 if f"https://example.com/{i}" in first_half else 0 for i in range(4)
    }


def test_the_split_is_bounded_by_the_request_budget(make_app, endpoint, clock):
    """Every other URL bad: isolating them all would take 126 extra requests; the budget stops it."""
    endpoint.decide = _reject_bad(400)
    urls = [f"https://example.com/{'bad' if i % 2 else 'ok'}/{i:02d}" for i in range(64)]
    app = make_app()
    with app.app_context():
        ext(app).enqueue_many(urls)
        result = ext(app).process_queue()
    assert SPLIT_REQUEST_BUDGET == 32
    assert result.requests == len(endpoint.received) == 1 + SPLIT_REQUEST_BUDGET
    # Nothing is left claimed: each URL either went through or failed.
    assert result.succeeded + result.failed == 64
    assert all(row["status"] == "failed" for row in queue_rows(app))
    assert {row["url"] for row in queue_rows(app)} >= {u for u in urls if "bad" in u}
    assert result.succeeded > 0  # the budget was spent on isolating some good URLs
    assert len(history_rows(app)) == 64


def test_the_budget_is_per_batch(make_app, endpoint, clock):
    """Each host's batch gets its own budget: one host's bad URLs do not fail another's."""
    endpoint.decide = _reject_bad(400)
    urls = [f"https://example.com/{'bad' if i % 2 else 'ok'}/{i:02d}" for i in range(64)]
    urls += ["https://other.org/ok/1", "https://other.org/bad/2"]
    app = make_app()
    with app.app_context():
        ext(app).enqueue_many(urls)
        result = ext(app).process_queue()
    assert result.requests == (1 + SPLIT_REQUEST_BUDGET) + 3
    other = [(h.url, h.status) for h in history_rows(app) if h.host == "other.org"]
    assert sorted(other) == [("https://other.org/bad/2", "failed"), ("https://other.org/ok/1", "success")]
