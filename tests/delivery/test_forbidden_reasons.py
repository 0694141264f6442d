"""A 403's reason (issue 20): "not verified yet" is retried, the key pending; other reasons fail with their hint.

The bodies are those engines answer (Bing and api.indexnow.org: JSON with ``errorCode``;
others: plain text), served by the real local endpoint server.
"""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest

from flask_indexnow.refusal import read_refusal
from flask_indexnow.testing import Reply

from ..web.conftest import PREFIX, allow
from .conftest import ext, history_rows, queue_rows

URL = "https://example.com/page"
DELAY = 120
NOT_VERIFIED = (b'{"errorCode":"SiteVerificationNotCompleted","message":"Site Verification is not completed. '
                b'Please wait for some time for the verification to complete and try again."}')
FORBIDDED = (b'{"errorCode":"UserForbiddedToAccessSite","message":"User is unauthorized to access the site. '
             b'Please verify the site using the key and try again"}')
KEY_NOT_FOUND = b'{"errorCode":"KeyNotFound","message":"Key not found"}'
JSON = {"Content-Type": "application/json; charset=utf-8"}


@pytest.mark.parametrize(("body", "kind", "code"), [
    (NOT_VERIFIED, "not_verified_yet", "SiteVerificationNotCompleted"),
    (b"Site verification is not completed yet, try again later", "not_verified_yet", None),
    (FORBIDDED, "site_forbidden", "UserForbiddedToAccessSite"),
    (b'{"code":"UserForbiddenToAccessSite"}', "site_forbidden", "UserForbiddenToAccessSite"),
    (KEY_NOT_FOUND, "key_not_found", "KeyNotFound"),
    (b"key not valid", "key_not_found", None),
    (b"Forbidden", "other", None),
    (b"", "other", None),
    (b"\xff\xfe<html>\x1b[31m", "other", None),
])
def test_the_reason_is_read_from_json_and_from_text(body, kind, code):
    refusal = read_refusal(body)
    assert (refusal.kind, refusal.code, refusal.temporary) == (kind, code, kind == "not_verified_yet")


def _status_hosts(app):
    data = app.test_client().get(PREFIX + "/status.json").get_json()
    return {h["host"]: h for h in data["hosts"]}, data


@pytest.mark.every_backend  # the retry's settle writes differ by database
def test_not_verified_yet_is_retried_with_the_delay_and_the_key_stays_pending(make_app, endpoint, clock, caplog):
    caplog.set_level(logging.INFO, logger="flask_indexnow")
    app = allow(make_app(INDEXNOW_RETRY_DELAY=DELAY, INDEXNOW_MAX_ATTEMPTS=5, INDEXNOW_FORBIDDEN_ESCALATION=2))
    endpoint.default = Reply(403, headers=JSON, body=NOT_VERIFIED)
    with app.app_context():
        ext(app).enqueue(URL)
        first = ext(app).process_queue()
        assert (first.claimed, first.retried, first.failed) == (1, 1, 0)
        [row] = queue_rows(app)
        assert (row["status"], row["attempts"], row["last_http_status"]) == ("pending", 1, 403)
        assert "SiteVerificationNotCompleted" in row["last_error"]
        assert abs((row["available_at"] - (clock.now + timedelta(seconds=DELAY))).total_seconds()) < 1
        assert ext(app).process_queue().claimed == 0  # not before the usual delay
        clock.advance(DELAY + 1)
        assert ext(app).process_queue().retried == 1  # still not verified: another attempt, no failure
    hosts, data = _status_hosts(app)
    assert hosts["example.com"]["state"] == "pending"
    assert "not finished verifying" in hosts["example.com"]["message"]
    assert data["key_states"]["rejected"] == 0
    lines = [r.getMessage() for r in caplog.records if "POST host=" in r.getMessage()]
    assert len(lines) == 2 and all("not finished verifying the key" in line for line in lines)
    assert all("in a row" not in line for line in lines)  # no 403 streak: the key was not refused
    assert not [r for r in caplog.records if r.levelno == logging.CRITICAL]

    endpoint.default = Reply(200)  # verification done: the next attempt goes through
    with app.app_context():
        clock.advance(DELAY + 1)
        assert ext(app).process_queue().succeeded == 1
    assert queue_rows(app) == []
    assert [h.status for h in history_rows(app)] == ["retry", "retry", "success"]
    assert _status_hosts(app)[0]["example.com"]["state"] == "verified"


def test_not_verified_yet_still_gives_up_after_max_attempts(make_app, endpoint, clock):
    app = make_app(INDEXNOW_RETRY_DELAY=DELAY, INDEXNOW_MAX_ATTEMPTS=2)
    endpoint.default = Reply(403, headers=JSON, body=NOT_VERIFIED)
    with app.app_context():
        ext(app).enqueue(URL)
        ext(app).process_queue()
        clock.advance(DELAY + 1)
        assert ext(app).process_queue().failed == 1
    assert [h.status for h in history_rows(app)] == ["retry", "failed"]


@pytest.mark.parametrize(("body", "message", "advice"), [
    (KEY_NOT_FOUND, "it did not find the key", "the engine did not find the key"),
    (FORBIDDED, "has not accepted this key for this host", "has not accepted this key for this host"),
    (b"Forbidden", "The engine rejected the key (HTTP 403).", "could not verify the key"),
])
def test_other_reasons_fail_at_once_with_the_hint_that_fits(make_app, endpoint, clock, caplog, body, message, advice):
    caplog.set_level(logging.INFO, logger="flask_indexnow")
    app = allow(make_app(INDEXNOW_MAX_ATTEMPTS=5))
    endpoint.default = Reply(403, headers=JSON, body=body)
    with app.app_context():
        ext(app).enqueue(URL)
        result = ext(app).process_queue()
    assert (result.failed, result.retried) == (1, 0)
    [row] = queue_rows(app)
    assert (row["status"], row["attempts"]) == ("failed", 1)
    [line] = [r.getMessage() for r in caplog.records if "POST host=" in r.getMessage()]
    assert advice in line and "(403 number 1 in a row for example.com)" in line
    hosts, _ = _status_hosts(app)
    assert hosts["example.com"]["state"] == "rejected"
    assert message in hosts["example.com"]["message"]
    if body is FORBIDDED:
        assert "INDEXNOW_PREVIOUS_KEYS" in hosts["example.com"]["hint"]
