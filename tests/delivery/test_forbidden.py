"""403 escalation (issue 13 §3): every 403 line names the key file; one CRITICAL line per streak."""

from __future__ import annotations

import logging
import uuid

import pytest
from flask import Flask
from flask_caching import Cache

from flask_indexnow.testing import Reply

from ..conftest import KEY, RUN_PREFIX
from ..web.conftest import allow
from .conftest import ext, state_of


def _cache_app(make_app, cache_kind: str, request: pytest.FixtureRequest, **config) -> Flask:
    if cache_kind == "redis":
        url = request.getfixturevalue("redis_url")
        cache = Cache(config={"CACHE_TYPE": "RedisCache", "CACHE_REDIS_URL": url,
                              "CACHE_KEY_PREFIX": f"{RUN_PREFIX}{uuid.uuid4().hex[:6]}:"})
        return make_app(cache=cache, **config)
    return make_app(**config)


def _one_batch(app: Flask, path: str) -> None:
    with app.app_context():
        ext(app).enqueue(f"https://example.com/{path}")
        ext(app).process_queue()


def _critical(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno == logging.CRITICAL and r.name.startswith("flask_indexnow")]


@pytest.mark.parametrize("cache_kind", ["simple", "redis"])
def test_one_critical_line_per_streak(make_app, endpoint, clock, caplog, request, cache_kind):
    app = _cache_app(make_app, cache_kind, request)
    caplog.set_level(logging.INFO, logger="flask_indexnow")
    endpoint.default = Reply(403, body=b"key not valid")
    for number in (1, 2):
        _one_batch(app, f"a{number}")
    assert _critical(caplog) == []
    _one_batch(app, "a3")
    [critical] = _critical(caplog)
    message = critical.getMessage()
    assert "host=example.com" in message and f"endpoint={endpoint.url}" in message
    assert f"https://example.com/{KEY}.txt" in message and "3 times in a row" in message
    assert critical.indexnow_host == "example.com"  # type: ignore[attr-defined]

    _one_batch(app, "a4")  # the streak goes on: no second CRITICAL line
    assert len(_critical(caplog)) == 1

    endpoint.default = Reply(200)  # a success ends the streak
    _one_batch(app, "ok")
    endpoint.default = Reply(403)
    for number in (5, 6):
        _one_batch(app, f"a{number}")
    assert len(_critical(caplog)) == 1
    _one_batch(app, "a7")
    assert len(_critical(caplog)) == 2  # a new streak, a new line


def test_every_403_line_names_the_key_file_and_what_to_check(make_app, endpoint, clock, caplog):
    app = make_app(INDEXNOW_KEY_LOCATION="https://cdn.example.net/keys/{key}.txt")
    caplog.set_level(logging.INFO, logger="flask_indexnow")
    endpoint.default = Reply(403, body=b"UserForbiddenToAccessSite")
    _one_batch(app, "a")
    _one_batch(app, "b")
    lines = [r.getMessage() for r in caplog.records if "POST host=" in r.getMessage()]
    assert len(lines) == 2
    for number, line in enumerate(lines, start=1):
        assert f"https://cdn.example.net/keys/{KEY}.txt" in line
        assert "error=HTTP 403: UserForbiddenToAccessSite" in line
        assert "exactly the key" in line and "robots.txt" in line and "redirected" in line
        assert f"(403 number {number} in a row for example.com)" in line


def test_other_failures_neither_extend_nor_end_a_streak(make_app, endpoint, clock, caplog):
    app = make_app(INDEXNOW_FORBIDDEN_ESCALATION=2)
    caplog.set_level(logging.INFO, logger="flask_indexnow")
    endpoint.script(Reply(403), Reply(500), Reply(429), Reply(400), Reply(403))
    for path in "abcde":
        _one_batch(app, path)
        clock.advance(3600)  # past any pause the 429 asked for
    [critical] = _critical(caplog)
    assert "2 times in a row" in critical.getMessage()


def test_streaks_are_per_host(make_app, endpoint, clock, caplog):
    app = make_app(INDEXNOW_FORBIDDEN_ESCALATION=2)
    endpoint.decide = lambda request: Reply(403) if request.json["host"] == "bad.org" else Reply(200)
    with app.app_context():
        for number in range(2):
            ext(app).enqueue_many([f"https://bad.org/{number}", f"https://good.org/{number}"])
            ext(app).process_queue()
    [critical] = _critical(caplog)
    assert "host=bad.org" in critical.getMessage()


def test_zero_disables_escalation(make_app, endpoint, clock, caplog):
    app = make_app(INDEXNOW_FORBIDDEN_ESCALATION=0)
    endpoint.default = Reply(403)
    for path in "abcd":
        _one_batch(app, path)
    assert _critical(caplog) == []


def test_the_status_page_says_the_key_state_is_escalated(make_app, endpoint, clock):
    app = allow(make_app())
    endpoint.default = Reply(403)
    for path in "abc":
        _one_batch(app, path)
    with app.test_client() as client:
        data = client.get("/indexnow/status.json").get_json()
        page = client.get("/indexnow/").get_data(as_text=True)
    [host] = [h for h in data["hosts"] if h["host"] == "example.com"]
    assert (host["state"], host["forbidden_streak"], host["escalated"]) == ("rejected", 3, True)
    assert "3 refusals in a row: escalated" in host["message"]
    assert "3 refusals in a row: escalated" in page

    endpoint.default = Reply(200)
    _one_batch(app, "ok")
    with app.test_client() as client:
        data = client.get("/indexnow/status.json").get_json()
    [host] = [h for h in data["hosts"] if h["host"] == "example.com"]
    assert (host["state"], host["forbidden_streak"], host["escalated"]) == ("verified", 0, False)


def test_the_streak_is_shared_through_the_cache(make_app, endpoint, clock, caplog, redis_url):
    """Two apps (two processes' worth of state) on one Redis count one streak and log one line."""
    prefix = f"{RUN_PREFIX}{uuid.uuid4().hex[:6]}:"

    def redis_cache() -> Cache:
        return Cache(config={"CACHE_TYPE": "RedisCache", "CACHE_REDIS_URL": redis_url, "CACHE_KEY_PREFIX": prefix})

    first = make_app(cache=redis_cache())
    second = make_app(cache=redis_cache(), create_tables=False)
    endpoint.default = Reply(403)
    for app, path in ((first, "a"), (second, "b"), (first, "c"), (second, "d")):
        _one_batch(app, path)
    [critical] = _critical(caplog)
    assert "3 times in a row" in critical.getMessage()
    with second.app_context():
        from flask_indexnow import engines
        from flask_indexnow.keys import forbidden

        state = state_of(second)
        assert forbidden.streaks(state, engines.first(state), ["example.com"]) == {"example.com": forbidden.Streak(4, True)}
