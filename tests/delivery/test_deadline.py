"""Whole-request deadlines: a trickling server cannot hold a POST, a sitemap download or a key check.

The HTTP library's timeout applies to each socket read; the server here sends
one byte every 0.2 s, so no single read ever times out. Each path must still
return within its timeout (+1 s), whichever part of the answer is trickled.
"""

from __future__ import annotations

import io
import time
from collections.abc import Iterator

import pytest

from flask_indexnow.delivery.endpoint import new_http_session, post_batch
from flask_indexnow.keys.keycheck import check_key_files
from flask_indexnow.sitemap import SitemapError
from flask_indexnow.sitemap.fetch import fetch_sitemap
from flask_indexnow.state import get_state

from ..conftest import KEY
from ..pretend_network import Network, network_fixture  # noqa: F401 (the fixture)
from ..raw_server import RawServer, reply, self_signed, trickled
from .conftest import ext, queue_rows

PARTS = ["status", "headers", "body"]
TIMEOUT = 1.0


@pytest.fixture
def raw() -> Iterator[RawServer]:
    server = RawServer().start()
    yield server
    server.stop()


def timed(fn, *args, **kwargs):
    started = time.monotonic()
    result = fn(*args, **kwargs)
    return result, time.monotonic() - started


@pytest.mark.parametrize("part", ["status", "headers"])
def test_post_returns_within_its_timeout(make_app, raw, part):
    raw.answer = trickled(reply("200 OK", {"X-Padding": "x" * 40}), part)
    app = make_app(INDEXNOW_ENDPOINT=raw.url("/indexnow"), INDEXNOW_TIMEOUT=TIMEOUT)
    with new_http_session() as http:
        answer, took = timed(post_batch, http, get_state(app).settings, "example.com", KEY, ["https://example.com/a"])
    assert took < TIMEOUT + 1
    assert (answer.outcome, answer.http_status, answer.error) == ("retry", None, "timeout after 1s")
    assert len(raw.requested) == 1


def test_post_with_a_trickled_body_keeps_the_answer_it_got(make_app, raw):
    # The status line came: the engine has answered. The body is not waited for.
    raw.answer = trickled(reply("200 OK", body=b"x" * 200), "body")
    app = make_app(INDEXNOW_ENDPOINT=raw.url("/indexnow"), INDEXNOW_TIMEOUT=TIMEOUT)
    with new_http_session() as http:
        answer, took = timed(post_batch, http, get_state(app).settings, "example.com", KEY, ["https://example.com/a"])
    assert took < TIMEOUT + 1
    assert (answer.outcome, answer.http_status) == ("success", 200)


def test_post_error_with_a_trickled_body_is_cut_at_the_deadline(make_app, raw):
    raw.answer = trickled(reply("503 Busy", body=b"y" * 200), "body")
    app = make_app(INDEXNOW_ENDPOINT=raw.url("/indexnow"), INDEXNOW_TIMEOUT=TIMEOUT)
    with new_http_session() as http:
        answer, took = timed(post_batch, http, get_state(app).settings, "example.com", KEY, ["https://example.com/a"])
    assert took < TIMEOUT + 1
    assert (answer.outcome, answer.http_status) == ("retry", 503)


def test_the_callers_deadline_cuts_a_longer_timeout(make_app, raw):
    raw.answer = trickled(reply("200 OK"), "status")
    app = make_app(INDEXNOW_ENDPOINT=raw.url("/indexnow"), INDEXNOW_TIMEOUT=30)
    with new_http_session() as http:
        answer, took = timed(post_batch, http, get_state(app).settings, "example.com", KEY,
                             ["https://example.com/a"], deadline=time.monotonic() + 1.0)
    assert took < 2.0
    assert (answer.outcome, answer.error) == ("retry", "no answer within the tick budget (1s)")


def test_a_deadline_already_past_sends_nothing(make_app, raw):
    app = make_app(INDEXNOW_ENDPOINT=raw.url("/indexnow"))
    with new_http_session() as http:
        answer = post_batch(http, get_state(app).settings, "example.com", KEY, ["https://example.com/a"],
                            deadline=time.monotonic() - 1)
    assert (answer.outcome, answer.error) == ("retry", "no answer within the tick budget (0s)")
    assert raw.requested == []


def test_a_trickling_endpoint_no_longer_stalls_a_pass(make_app, raw, clock):
    raw.answer = trickled(reply("200 OK"), "headers")
    app = make_app(INDEXNOW_ENDPOINT=raw.url("/indexnow"), INDEXNOW_TIMEOUT=TIMEOUT)
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
        result, took = timed(ext(app).process_queue)
    assert took < TIMEOUT + 1 + 2  # one POST cut at its deadline, plus the pass's own database work
    assert result.retried == 1
    [row] = queue_rows(app)
    assert row["status"] == "pending" and "timeout after 1s" in row["last_error"]


@pytest.mark.parametrize("part", PARTS)
def test_sitemap_fetch_returns_within_its_timeout(raw, part):
    raw.answer = trickled(reply("200 OK", {"Content-Type": "application/xml"}, b"<urlset>" + b" " * 100), part)
    with new_http_session() as http:
        started = time.monotonic()
        with pytest.raises(SitemapError) as caught:
            fetch_sitemap(raw.url("/sitemap.xml"), io.BytesIO(), allow_private=True, timeout=TIMEOUT,
                          download_deadline=TIMEOUT, http=http)
        took = time.monotonic() - started
    assert took < TIMEOUT + 1
    expected = "took longer than 1s" if part == "body" else "no answer within 1s"
    assert expected in str(caught.value)


@pytest.mark.parametrize("part", PARTS)
def test_key_check_returns_within_its_timeout(make_app, raw, part):
    raw.answer = trickled(reply("200 OK", {"Content-Type": "text/plain"}, KEY.encode()), part)
    app = make_app(INDEXNOW_KEY_LOCATION="http://{host}/{key}.txt", INDEXNOW_TIMEOUT=TIMEOUT)
    with app.app_context():
        [result], took = timed(check_key_files, get_state(), [raw.netloc])
    assert took < TIMEOUT + 1
    assert [p.code for p in result.problems] == ["unreachable"]
    assert "within 1s" in result.problems[0].message


@pytest.mark.parametrize("part", [None, "status", "headers"])
def test_over_tls_the_name_is_verified_and_the_deadline_holds(make_app, tmp_path, network: Network, part):
    # The connection goes to the address resolved (127.0.0.1), while SNI and the certificate
    # check use the name; a trickled answer inside TLS is cut like a plain one.
    cert, context = self_signed(str(tmp_path), "engine.example")
    network.answer("engine.example", ["127.0.0.1"])
    data = reply("200 OK", {"X-Padding": "x" * 40})
    with RawServer(trickled(data, part) if part else None, tls=context) as raw:
        if part is None:
            raw.answer.data = data
        app = make_app(INDEXNOW_ENDPOINT=f"https://engine.example:{raw.port}/indexnow", INDEXNOW_TIMEOUT=TIMEOUT)
        with new_http_session() as http:
            http.verify = cert
            answer, took = timed(post_batch, http, get_state(app).settings, "example.com", KEY,
                                 ["https://example.com/a"])
    assert took < TIMEOUT + 1
    if part is None:
        assert (answer.outcome, answer.http_status) == ("success", 200), answer
    else:
        assert (answer.outcome, answer.error) == ("retry", "timeout after 1s")
    assert network.connected == ["127.0.0.1"]


def test_over_tls_a_certificate_for_another_name_is_refused(make_app, tmp_path, network: Network):
    cert, context = self_signed(str(tmp_path), "other.example")
    network.answer("engine.example", ["127.0.0.1"])
    with RawServer(tls=context) as raw:
        app = make_app(INDEXNOW_ENDPOINT=f"https://engine.example:{raw.port}/indexnow", INDEXNOW_TIMEOUT=TIMEOUT)
        with new_http_session() as http:
            http.verify = cert
            answer = post_batch(http, get_state(app).settings, "example.com", KEY, ["https://example.com/a"])
    assert answer.outcome == "retry" and "SSLError" in (answer.error or "")
    assert raw.requested == []
