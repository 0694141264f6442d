"""Signals url_enqueued, batch_sent, delivery_failed and the log lines of each POST (SPEC §11)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from flask_indexnow import signals

from ..endpoint_server import Reply
from .conftest import ext, queue_rows


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, dict[str, Any]]] = []

    def __call__(self, sender: Any, **kwargs: Any) -> None:
        self.calls.append((sender, kwargs))


@pytest.fixture
def recorded():
    found = {name: Recorder() for name in ("url_enqueued", "batch_sent", "delivery_failed")}
    for name, recorder in found.items():
        getattr(signals, name).connect(recorder)
    yield found
    for name, recorder in found.items():
        getattr(signals, name).disconnect(recorder)


def test_url_enqueued(make_app, endpoint, clock, recorded):
    app = make_app()
    other = make_app(create_tables=False)
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
        ext(app).enqueue_many(["https://example.com/b", "https://example.com/c", "https://example.com/b"], "delete")
    with other.app_context():
        ext(other).enqueue("https://other.org/x")
    calls = recorded["url_enqueued"].calls
    mine = [(kwargs["action"], sorted(kwargs["urls"])) for sender, kwargs in calls if sender is app]
    assert mine == [("update", ["https://example.com/a"]), ("delete", ["https://example.com/b", "https://example.com/c"])]
    assert all(set(kwargs) == {"urls", "action"} for _, kwargs in calls)
    assert [sender for sender, _ in calls] == [app, app, other]  # receivers can filter by app


def test_batch_sent_and_delivery_failed(make_app, endpoint, clock, recorded):
    def decide(request):
        host = request.json["host"]
        return {"ok.example.com": Reply(202), "tmp.example.com": Reply(503, body=b"busy"),
                "bad.example.com": Reply(403, body=b"key not valid")}[host]

    endpoint.decide = decide
    app = make_app(INDEXNOW_MAX_ATTEMPTS=3)
    with app.app_context():
        ext(app).enqueue_many(["https://ok.example.com/1", "https://ok.example.com/2"])
        ext(app).enqueue("https://tmp.example.com/1")
        ext(app).enqueue("https://bad.example.com/1")
        ext(app).process_queue()
    [(sender, sent)] = recorded["batch_sent"].calls
    assert sender is app
    assert set(sent) == {"host", "urls", "status", "duration", "engine"}  # engine: issue 13 §1
    assert sent["engine"] == endpoint.url
    assert (sent["host"], sorted(sent["urls"]), sent["status"]) == (
        "ok.example.com", ["https://ok.example.com/1", "https://ok.example.com/2"], 202,
    )
    assert isinstance(sent["duration"], float) and sent["duration"] >= 0
    failed = sorted((kwargs for sender, kwargs in recorded["delivery_failed"].calls), key=lambda k: k["host"])
    assert all(sender is app for sender, _ in recorded["delivery_failed"].calls)
    assert failed == [
        {"host": "bad.example.com", "urls": ["https://bad.example.com/1"], "status": 403,
         "error": "HTTP 403: key not valid", "permanent": True, "engine": endpoint.url},
        {"host": "tmp.example.com", "urls": ["https://tmp.example.com/1"], "status": 503,
         "error": "HTTP 503: busy", "permanent": False, "engine": endpoint.url},
    ]


def test_delivery_failed_on_a_network_error_and_on_the_last_attempt(make_app, endpoint, clock, recorded):
    endpoint.default = Reply(reset=True)
    app = make_app(INDEXNOW_MAX_ATTEMPTS=2, INDEXNOW_RETRY_DELAY=10)
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
        ext(app).process_queue()
        clock.advance(10)
        ext(app).process_queue()
    calls = [kwargs for _, kwargs in recorded["delivery_failed"].calls]
    assert [(c["status"], c["permanent"]) for c in calls] == [(None, False), (None, True)]
    assert all(c["error"].startswith("network error") for c in calls)


def test_a_failing_receiver_does_not_break_delivery(make_app, endpoint, clock, caplog):
    def broken(sender, **kwargs):
        raise RuntimeError("receiver bug")

    app = make_app()
    with signals.batch_sent.connected_to(broken), signals.url_enqueued.connected_to(broken), app.app_context():
        assert ext(app).enqueue("https://example.com/a") == "https://example.com/a"
        ext(app).enqueue("https://other.org/b")
        result = ext(app).process_queue()
    assert result.succeeded == 2
    assert len(endpoint.received) == 2  # the second batch went out after the first receiver failed
    assert queue_rows(app) == []
    assert "receiver bug" in caplog.text


def test_log_line_per_post(make_app, endpoint, clock, caplog):
    caplog.set_level("INFO", logger="flask_indexnow")
    endpoint.decide = lambda request: Reply(200) if request.json["host"] == "example.com" else Reply(500)
    app = make_app()
    with app.app_context():
        ext(app).enqueue_many(["https://example.com/a", "https://example.com/b"])
        ext(app).enqueue("https://other.org/c")
        ext(app).process_queue()
    lines = {r.getMessage(): r.levelname for r in caplog.records if "POST host=" in r.getMessage()}
    ok = [m for m in lines if "host=example.com" in m]
    bad = [m for m in lines if "host=other.org" in m]
    assert len(ok) == len(bad) == 1
    where = re.escape(f"endpoint={endpoint.url}")
    assert re.fullmatch(rf"IndexNow POST host=example\.com {where} count=2 status=200 duration=\d+\.\d{{3}}s", ok[0])
    assert re.fullmatch(rf"IndexNow POST host=other\.org {where} count=1 status=500 duration=\d+\.\d{{3}}s "
                        r"error=HTTP 500: .*", bad[0])
    assert (lines[ok[0]], lines[bad[0]]) == ("INFO", "WARNING")
    summary = [r.getMessage() for r in caplog.records if r.getMessage().startswith("IndexNow pass ")]
    assert summary == [f"IndexNow pass endpoint={endpoint.url}: claimed 3, succeeded 2, retried 1, failed 0, stale reset 0"]


def test_log_line_for_a_network_error(make_app, endpoint, clock, caplog):
    endpoint.default = Reply(reset=True)
    app = make_app()
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
        ext(app).process_queue()
    [line] = [r.getMessage() for r in caplog.records if "POST host=" in r.getMessage()]
    assert re.fullmatch(rf"IndexNow POST host=example\.com endpoint={re.escape(endpoint.url)} count=1 status=- "
                        r"duration=\d+\.\d{3}s error=network error: .*", line)
