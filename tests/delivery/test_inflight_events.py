"""An event that arrives while its row is being delivered is not lost (SPEC §3, last rule)."""

from __future__ import annotations

import pytest

from ..endpoint_server import Reply
from .conftest import ext, history_rows, queue_rows

pytestmark = pytest.mark.every_backend  # upserts racing claims differ by database

URL = "https://example.com/page"


def _enqueue_during_post(app, endpoint, action: str, reply: Reply, url: str = URL) -> None:
    """While the first POST is in flight, a request of the site queues ``url`` again."""
    calls: list[int] = []

    def decide(request):
        if not calls:
            with app.app_context():
                ext(app).enqueue(url, action)
        calls.append(1)
        return reply

    endpoint.decide = decide


@pytest.mark.parametrize("reply", [Reply(200), Reply(202), Reply(503), Reply(400), Reply(reset=True)])
def test_an_event_during_delivery_survives_whatever_the_answer(make_app, endpoint, clock, reply):
    app = make_app(INDEXNOW_MAX_ATTEMPTS=1)
    _enqueue_during_post(app, endpoint, "delete", reply)
    with app.app_context():
        ext(app).enqueue(URL, "update")
        first = ext(app).process_queue()
    assert first.claimed == 1
    [row] = queue_rows(app)
    assert (row["action"], row["status"], row["attempts"]) == ("delete", "pending", 0)
    assert (row["claim_token"], row["claimed_at"], row["last_error"], row["last_http_status"]) == (None,) * 4
    assert (first.retried, first.failed) == (0, 0)
    # The attempt that was under way is still in the history, as the update it was.
    [attempt] = history_rows(app)
    assert attempt.action == "update"
    endpoint.decide = None
    endpoint.default = Reply(200)
    with app.app_context():
        second = ext(app).process_queue()
    assert second.succeeded == 1
    assert queue_rows(app) == []
    assert [(h.action, h.status) for h in history_rows(app)][-1] == ("delete", "success")
    assert endpoint.urls_received() == [URL, URL]


def test_same_action_during_delivery_is_sent_again(make_app, endpoint, clock):
    """The content may have changed after the POST was built: it is submitted once more."""
    app = make_app()
    _enqueue_during_post(app, endpoint, "update", Reply(200))
    with app.app_context():
        ext(app).enqueue(URL)
        ext(app).process_queue()
        [row] = queue_rows(app)
        assert (row["action"], row["status"]) == ("update", "pending")
        endpoint.decide = None
        assert ext(app).process_queue().succeeded == 1
    assert queue_rows(app) == []


def test_an_event_for_another_url_of_the_batch_does_not_disturb_the_rest(make_app, endpoint, clock):
    app = make_app()
    _enqueue_during_post(app, endpoint, "delete", Reply(200), url="https://example.com/b")
    with app.app_context():
        ext(app).enqueue_many(["https://example.com/a", "https://example.com/b", "https://example.com/c"])
        result = ext(app).process_queue()
    assert result.succeeded == 3
    [row] = queue_rows(app)
    assert (row["url"], row["action"], row["status"]) == ("https://example.com/b", "delete", "pending")
