"""Issue 13 §1: several engines (INDEXNOW_ENDPOINTS), each with its own delivery state.

Two real local endpoints on every database: each receives each URL once; one
engine's failure, 429 pause or 403 streak never touches the other; history
names the engine that answered.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from datetime import timedelta

import pytest

from flask_indexnow import engines, queue, signals
from flask_indexnow.checks import run_checks
from flask_indexnow.config import MAX_ENDPOINTS, load_settings
from flask_indexnow.delivery import worker
from flask_indexnow.errors import ConfigurationError
from flask_indexnow.explain import explain_url
from flask_indexnow.keys import forbidden
from flask_indexnow.status.document import status_document

from ..endpoint_server import EndpointServer, Reply
from .conftest import ext, history_rows, queue_rows, state_of

DELAY = 60
URLS = [f"https://example.com/page/{i}" for i in range(3)]


@pytest.fixture
def second() -> Iterator[EndpointServer]:
    server = EndpointServer().start()
    yield server
    server.stop()


def two_engines(make_app, endpoint, second, **config):
    return make_app(INDEXNOW_ENDPOINTS=[endpoint.url, second.url], INDEXNOW_RETRY_DELAY=DELAY, **config)


@pytest.mark.every_backend  # the per-engine upsert differs by database
def test_each_engine_receives_each_url_once_and_history_names_it(make_app, endpoint, second, clock):
    app = two_engines(make_app, endpoint, second)
    sent = []
    signals.batch_sent.connect(lambda sender, **kw: sent.append(kw), weak=False)
    try:
        with app.app_context():
            ext(app).enqueue_many(URLS)
            assert {(r["engine"], r["url"]) for r in queue_rows(app)} == {
                (e, u) for e in (endpoint.url, second.url) for u in URLS}
            result = ext(app).process_queue()
            assert (result.claimed, result.succeeded, result.requests) == (6, 6, 2)
            assert ext(app).process_queue().claimed == 0
    finally:
        signals.batch_sent.receivers.clear()
    assert sorted(endpoint.urls) == sorted(URLS) and sorted(second.urls) == sorted(URLS)
    assert endpoint.bodies[0] == second.bodies[0]  # the same body to each engine
    assert queue_rows(app) == []
    assert sorted((h.engine, h.url, h.status) for h in history_rows(app)) == sorted(
        (e, u, "success") for e in (endpoint.url, second.url) for u in URLS)
    assert sorted(s["engine"] for s in sent) == sorted([endpoint.url, second.url])


def test_one_engine_fails_the_other_is_never_sent_again(make_app, endpoint, second, clock):
    second.script(503)
    app = two_engines(make_app, endpoint, second)
    failed = []
    signals.delivery_failed.connect(lambda sender, **kw: failed.append(kw), weak=False)
    try:
        with app.app_context():
            ext(app).enqueue_many(URLS)
            first = ext(app).process_queue()
            assert (first.succeeded, first.retried) == (3, 3)
            left = queue_rows(app)
            assert {(r["engine"], r["status"], r["attempts"], r["last_http_status"]) for r in left} == {
                (second.url, "pending", 1, 503)}
            clock.advance(DELAY - 1)
            assert ext(app).process_queue().claimed == 0  # B's retry waits for its own delay
            clock.advance(1)
            again = ext(app).process_queue()
            assert (again.claimed, again.succeeded) == (3, 3)
    finally:
        signals.delivery_failed.receivers.clear()
    assert sorted(endpoint.urls) == sorted(URLS)  # A got each URL once, never re-sent
    assert sorted(second.urls) == sorted(URLS * 2)
    assert [f["engine"] for f in failed] == [second.url] and failed[0]["permanent"] is False
    assert sorted((h.engine, h.http_status) for h in history_rows(app)) == sorted(
        [(endpoint.url, 200)] * 3 + [(second.url, 503)] * 3 + [(second.url, 200)] * 3)


def test_a_429_pauses_only_that_engine(make_app, endpoint, second, clock):
    second.script(Reply(429, retry_after=120))
    app = two_engines(make_app, endpoint, second)
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
        assert ext(app).process_queue().retried == 1
        state = state_of(app)
        assert worker.endpoint_paused_until(state, engines.engine(state, endpoint.url)) is None
        assert worker.endpoint_paused_until(state, engines.engine(state, second.url)) == clock.now + timedelta(seconds=120)

        ext(app).enqueue_many(["https://example.com/b", "https://other.org/c"])
        clock.advance(60)
        during = ext(app).process_queue()
        assert during.skipped_reason is None
        assert sorted(endpoint.urls) == ["https://example.com/a", "https://example.com/b", "https://other.org/c"]
        assert len(second.requests) == 1  # nothing to B while it is paused; its rows given back
        assert during.released == 2 and {r["engine"] for r in queue_rows(app)} == {second.url}
        assert all(r["attempts"] == 0 for r in queue_rows(app) if r["url"] != "https://example.com/a")

        clock.advance(60)
        after = ext(app).process_queue()
        assert after.succeeded == 3
    assert sorted(second.urls) == ["https://example.com/a", "https://example.com/a",
                                   "https://example.com/b", "https://other.org/c"]
    assert queue_rows(app) == []


def test_a_pass_is_skipped_only_when_every_engine_is_paused(make_app, endpoint, second, clock):
    endpoint.script(Reply(429, retry_after=100))
    second.script(Reply(429, retry_after=200))
    app = two_engines(make_app, endpoint, second)
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
        ext(app).process_queue()
        ext(app).enqueue("https://example.com/b")
        skipped = ext(app).process_queue()
        assert skipped.claimed == 0 and "HTTP 429" in skipped.skipped_reason
        clock.advance(100)
        assert ext(app).process_queue().skipped_reason is None


def test_403_streak_escalates_only_that_engine(make_app, endpoint, second, clock, caplog):
    second.answer(403)
    app = two_engines(make_app, endpoint, second, INDEXNOW_FORBIDDEN_ESCALATION=3)
    with app.app_context(), caplog.at_level(logging.INFO, logger="flask_indexnow"):
        for i in range(4):
            ext(app).enqueue(f"https://example.com/{i}")
            ext(app).process_queue()
        critical = [r for r in caplog.records if r.levelno == logging.CRITICAL]
        assert len(critical) == 1 and second.url in critical[0].getMessage()
        assert endpoint.url not in critical[0].getMessage()
        state = state_of(app)
        assert forbidden.streaks(state, engines.engine(state, second.url), ["example.com"])["example.com"].escalated
        assert forbidden.streaks(state, engines.engine(state, endpoint.url), ["example.com"]) == {}
    assert len(endpoint.urls) == 4  # A accepted every URL
    assert {(r["engine"], r["status"]) for r in queue_rows(app)} == {(second.url, "failed")}
    assert {h.engine for h in history_rows(app) if h.http_status == 403} == {second.url}


def test_status_document_lists_each_engine(make_app, endpoint, second, clock):
    second.script(Reply(429, retry_after=120))
    app = two_engines(make_app, endpoint, second, INDEXNOW_REQUESTS_PER_MINUTE=5)
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
        ext(app).process_queue()
        engines = status_document(state_of(app))["engines"]
    assert [e["endpoint"] for e in engines] == [endpoint.url, second.url]
    first, other = engines
    assert (first["pending"], first["paused_until"], first["budget"]["used"], first["budget"]["limit"]) == (
        0, None, 1, 5)
    assert (other["pending"], other["pause_status"], other["budget"]["used"]) == (1, 429, 1)
    assert other["paused_until"] == (clock.now + timedelta(seconds=120)).isoformat()


def test_the_verdict_names_any_engine_that_asked_to_pause(make_app, endpoint, second, clock):
    second.script(Reply(429, retry_after=120))
    app = two_engines(make_app, endpoint, second, INDEXNOW_ALLOWED_HOSTS=["example.com"])
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
        ext(app).process_queue()
        document = status_document(state_of(app))
    assert document["endpoint_paused_until"] is None  # the first engine's member: it sends
    resumes = f"{clock.now + timedelta(seconds=120):%Y-%m-%d %H:%M} UTC"
    assert document["verdict"]["title"] == "Needs attention"
    assert f"Engine {second.url} asked to pause (HTTP 429); sending to it resumes at {resumes}." in (
        document["verdict"]["reasons"])


@pytest.mark.every_backend  # the settle writes differ by database
def test_rows_of_an_engine_no_longer_configured_fail_with_a_clear_error(make_app, endpoint, second, clock):
    app = two_engines(make_app, endpoint, second)
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
    later = make_app(INDEXNOW_ENDPOINTS=[endpoint.url], INDEXNOW_TABLE_PREFIX=state_of(app).prefix,
                     create_tables=False)
    with later.app_context():
        result = ext(later).process_queue()
    assert (result.succeeded, result.failed) == (1, 1)
    assert second.requests == []
    (gone,) = queue_rows(later)
    assert (gone["engine"], gone["status"]) == (second.url, "failed")
    assert "no longer configured" in gone["last_error"]


def test_one_endpoint_keeps_the_default_engine(make_app, endpoint, clock):
    """Without INDEXNOW_ENDPOINTS nothing changes: one row per URL, engine "", history names the endpoint."""
    app = make_app()
    with app.app_context():
        ext(app).enqueue_many(URLS)
        assert [r["engine"] for r in queue_rows(app)] == ["", "", ""]
        assert ext(app).process_queue().succeeded == 3
    assert {h.engine for h in history_rows(app)} == {endpoint.url}


@pytest.mark.parametrize(("value", "message"), [
    ("x", None),
    (["https://a.example/i", "https://a.example/i"], "twice"),
    ([f"https://e{i}.example/i" for i in range(MAX_ENDPOINTS + 1)], "at most"),
    (["https://a.example/" + "x" * 300], "at most 255"),
    ([], "empty"),
    ([None], "not a URL"),
    ({"a": 1}, "list of endpoint URLs"),
])
def test_bad_endpoint_lists_are_refused_at_init(value, message):
    if message is None:
        settings = load_settings({"INDEXNOW_ENDPOINTS": "https://a.example/i, https://b.example/i"})
        assert settings.endpoints == ("https://a.example/i", "https://b.example/i")
        assert settings.endpoint == "https://a.example/i"
        return
    with pytest.raises(ConfigurationError, match=message):
        load_settings({"INDEXNOW_ENDPOINTS": value})


def test_each_engine_is_checked_before_sending(make_app, endpoint, clock):
    app = make_app(INDEXNOW_ENDPOINTS=[endpoint.url, "ftp://bad.example/x"])
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
        result = ext(app).process_queue()
    assert "INDEXNOW_ENDPOINTS" in result.skipped_reason and "ftp://bad.example/x" in result.skipped_reason
    assert endpoint.requests == []
    with app.app_context():
        (check,) = [c for c in run_checks(state_of(app)) if c.name == "endpoint"]
    assert not check.ok and "ftp://bad.example/x" in check.message


def test_the_endpoint_check_names_every_engine(make_app, endpoint, second):
    app = two_engines(make_app, endpoint, second)
    with app.app_context():
        (check,) = [c for c in run_checks(state_of(app)) if c.name == "endpoint"]
    assert check.ok and check.message == f"Submissions go to {endpoint.url}, {second.url}."


@pytest.mark.every_backend  # the per-engine upsert differs by database
def test_an_unchanged_save_while_one_engine_retries_goes_to_that_engine_only(make_app, endpoint, second, clock):
    """The fingerprint ledger is per URL, written on each engine's success: A took the content, B has not yet."""
    second.script(503)
    app = two_engines(make_app, endpoint, second)
    with app.app_context():
        queue.enqueue(state_of(app), "https://example.com/a", fingerprint="v1")
        ext(app).process_queue()
        assert [r["engine"] for r in queue_rows(app)] == [second.url]
        queue.enqueue(state_of(app), "https://example.com/a", fingerprint="v1")  # saved again, unchanged
        assert [r["engine"] for r in queue_rows(app)] == [second.url]
        clock.advance(DELAY)
        assert ext(app).process_queue().succeeded == 1
        queue.enqueue(state_of(app), "https://example.com/a", fingerprint="v1")  # delivered everywhere: skipped
        assert queue_rows(app) == []
        queue.enqueue(state_of(app), "https://example.com/a", fingerprint="v2")  # changed: both engines again
        assert sorted(r["engine"] for r in queue_rows(app)) == sorted([endpoint.url, second.url])
    assert endpoint.urls == ["https://example.com/a"]


def test_explain_tells_each_engines_part(make_app, endpoint, second, clock):
    second.script(Reply(503, body="busy"))
    app = two_engines(make_app, endpoint, second, INDEXNOW_REQUESTS_PER_MINUTE=10)
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
        ext(app).process_queue()
        found = explain_url(state_of(app), "https://example.com/a")
        result = app.test_cli_runner().invoke(args=["indexnow", "explain", "https://example.com/a", "--json"])
    first, other = found.engines
    assert (first["engine"], first["queue"]) == (endpoint.url, None)  # A has it: no row left
    assert (other["engine"], other["queue"]["status"], other["queue"]["attempts"]) == (second.url, "pending", 1)
    assert other["budget"]["used"] == 1 and other["budget"]["limit"] == 10
    assert any(line.startswith(f"Engine {second.url}: pending, 1 attempt(s)") and "HTTP 503" in line
               for line in found.story)
    assert any(line.startswith(f"Engine {endpoint.url}: no row") for line in found.story)
    assert sorted((h["engine"], h["http_status"]) for h in found.history) == sorted(
        [(endpoint.url, 200), (second.url, 503)])
    assert result.exit_code == 0, result.output
    assert [e["engine"] for e in json.loads(result.output)["engines"]] == [endpoint.url, second.url]


def test_the_status_command_has_a_line_per_engine(make_app, endpoint, second, clock):
    second.script(503)
    app = two_engines(make_app, endpoint, second, INDEXNOW_REQUESTS_PER_MINUTE=4)
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
        ext(app).process_queue()
    output = app.test_cli_runner().invoke(args=["indexnow", "status"]).output
    assert f"Engine {endpoint.url}: 0 pending, 0 processing, 0 failed; 1/4 requests this minute" in output
    assert f"Engine {second.url}: 1 pending, 0 processing, 0 failed; 1/4 requests this minute" in output
