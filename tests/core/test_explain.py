"""``flask indexnow explain URL`` (issue 13 §4): the whole story of one URL, on every database."""

from __future__ import annotations

import json
from datetime import timedelta

import sqlalchemy as sa
from flask import Flask

from flask_indexnow import IndexNow
from flask_indexnow.explain import HISTORY_LIMIT, explain_url
from flask_indexnow.testing import Reply

from ..conftest import rows
from ..web.conftest import insert


def run(app: Flask, *args: str):
    return app.test_cli_runner().invoke(args=["indexnow", "explain", *args])


def ext(app: Flask) -> IndexNow:
    return app.extensions["indexnow"].extension  # type: ignore[no-any-return]


def as_json(app: Flask, url: str) -> dict:
    result = run(app, url, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_an_unknown_acceptable_url(make_app, clock) -> None:
    app = make_app()
    result = run(app, "HTTPS://Example.com/a#top")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0] == "https://example.com/a"
    assert "Accepted now: it would be queued as https://example.com/a (host example.com)." in result.output
    assert "Queue: no row" in result.output and "History: no delivery attempt recorded." in result.output
    data = as_json(app, "HTTPS://Example.com/a#top")
    assert (data["accepted"], data["known"], data["normalized"], data["queue"], data["history"]) == (
        True, False, "https://example.com/a", None, [])


def test_a_refused_url_is_one_line_and_exit_1(make_app, clock) -> None:
    app = make_app()
    result = run(app, "http://localhost/x")
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        "Error: http://localhost/x is refused: host localhost is reserved for local use"]
    assert "Traceback" not in result.output
    result = run(app, "ftp://example.com/", "--json")
    assert result.exit_code == 1
    data = json.loads(result.output)
    assert data["accepted"] is False and "only http and https" in data["refused_because"]


def test_a_url_known_but_refused_now_is_told_with_exit_0(make_app, clock) -> None:
    app = make_app()
    with app.app_context():
        ext(app).enqueue("https://old.example.org/page")
    strict = make_app(create_tables=False, INDEXNOW_ALLOWED_HOSTS=["example.com"])
    result = run(strict, "https://old.example.org/page")
    assert result.exit_code == 0, result.output
    assert "Refused now: host old.example.org is not in INDEXNOW_ALLOWED_HOSTS." in result.output
    assert "Queue: update pending, 0 of 5 attempts spent; due now." in result.output


def test_a_retried_url_shows_its_row_and_history_made_safe(make_app, endpoint, clock) -> None:
    endpoint.default = Reply(503, body="\x1b[31mbusy\rnow\u202e".encode("utf-8"))
    app = make_app(INDEXNOW_RETRY_DELAY=600)
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
        ext(app).process_queue()
    clock.advance(60)
    data = as_json(app, "https://example.com/a")
    queue = data["queue"]
    assert (queue["status"], queue["action"], queue["attempts"], queue["last_http_status"], queue["due_now"]) == (
        "pending", "update", 1, 503, False)
    assert queue["last_error"] == "HTTP 503: [31mbusy now"
    assert queue["available_at"] == (clock.now + timedelta(seconds=540)).isoformat()
    [answer] = data["history"]
    assert (answer["status"], answer["http_status"], answer["attempt"], answer["error"]) == (
        "retry", 503, 1, "HTTP 503: [31mbusy now")
    assert data["known"] is True and data["history_total"] == 1
    text = run(app, "https://example.com/a").output
    assert "Queue: update pending, 1 of 5 attempts spent; next attempt " in text and "(in 9 min)" in text
    assert "last answer: HTTP 503: [31mbusy now." in text
    assert "retry    HTTP 503  attempt 1  HTTP 503: [31mbusy now" in text
    assert not any(ch in text for ch in "\x1b\r\u202e")


def test_a_delivered_url_shows_the_ledger_and_the_resubmit_hold(make_app, endpoint, clock) -> None:
    app = make_app(INDEXNOW_RESUBMIT_INTERVAL=3600)
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
        ext(app).process_queue()
        delivered_at = clock.now
        clock.advance(600)
        found = explain_url(app.extensions["indexnow"], "https://example.com/a")
    assert found.queue is None and [h["status"] for h in found.history] == ["success"]
    assert found.ledger == {"fingerprint": None, "last_success_at": delivered_at,
                            "verdict": None, "verified_at": None, "withdrawn_at": None}  # (no INDEXNOW_VERIFY)
    assert found.resubmit_held_until == delivered_at + timedelta(seconds=3600)
    text = run(app, "https://example.com/a").output
    assert "Ledger: fingerprint (none), last delivered" in text and "(10 min ago)" in text
    assert "an update queued now waits until" in text and "(in 50 min)" in text
    clock.advance(3600)
    assert "Resubmit interval: holds nothing back now." in run(app, "https://example.com/a").output


def test_the_endpoint_pause_that_holds_it(make_app, endpoint, clock) -> None:
    endpoint.default = Reply(429, retry_after=900)
    app = make_app()
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
        ext(app).process_queue()
    data = as_json(app, "https://example.com/a")
    assert data["endpoint_paused_until"] == (clock.now + timedelta(seconds=900)).isoformat()
    assert "Endpoint: paused until" in run(app, "https://example.com/a").output


def test_a_claimed_row_and_a_capped_history(make_app, clock) -> None:
    app = make_app(INDEXNOW_STALE_AFTER=900)
    with app.app_context():
        ext(app).enqueue("https://example.com/a", "delete")
    state = app.extensions["indexnow"]
    table = state.models.Queue.__table__
    with app.app_context(), state.engine().begin() as connection:
        connection.execute(sa.update(table).values(status="processing", claimed_at=clock.now, claim_token="t" * 32))
    insert(app, "History", *[
        {"host": "example.com", "url": "https://example.com/a", "action": "delete", "status": "retry",
         "http_status": 500, "error": f"answer {n}", "attempts": 1, "created_at": clock.now - timedelta(minutes=n)}
        for n in range(HISTORY_LIMIT + 5)
    ])
    data = as_json(app, "https://example.com/a")
    assert data["queue"]["status"] == "processing" and data["queue"]["claimed_at"] == clock.now.isoformat()
    assert data["queue"]["stale_at"] == (clock.now + timedelta(seconds=900)).isoformat()
    assert data["history_total"] == HISTORY_LIMIT + 5
    assert [h["error"] for h in data["history"]] == [f"answer {n}" for n in range(HISTORY_LIMIT)]  # newest first
    text = run(app, "https://example.com/a").output
    assert "Queue: delete processing" in text and "taken back if still claimed at" in text
    assert f"History: {HISTORY_LIMIT + 5} answer(s), the latest {HISTORY_LIMIT} below." in text
    assert len(rows(app)) == 1  # explaining writes nothing
