"""``flask indexnow status`` tells the same truth as the page: the verdict first, a pause always,
and a cache that does not answer is a failing check.

A site owner saw only ``[ok ]`` lines during a 429 pause while ``--json`` said
"Needs attention", and "RedisCache works as a lock" while Redis was down.
"""

from __future__ import annotations

import json
from typing import Any

from flask import Flask

from flask_indexnow import IndexNow
from flask_indexnow.breaker import WINDOW

from ..endpoint_server import Reply

SOCKET_TIMEOUT = 0.5
#: A closed allow-list, so the verdict can say "Working".
HOSTS = ["example.com"]


def run(app: Flask, *args: str) -> Any:
    return app.test_cli_runner().invoke(args=["indexnow", *args])


def ext(app: Flask) -> IndexNow:
    return app.extensions["indexnow"].extension  # type: ignore[no-any-return]


def status_json(app: Flask) -> dict[str, Any]:
    result = run(app, "status", "--json")
    assert result.exit_code == 0, result.output  # --json exits 0 whatever the verdict: scripts read verdict.level
    return json.loads(result.output)  # type: ignore[no-any-return]


def cache_check(data: dict[str, Any]) -> dict[str, Any]:
    (check,) = [c for c in data["checks"] if c["name"] == "cache"]
    return check


def test_a_healthy_queue_says_working_first(make_app, endpoint) -> None:
    app = make_app(INDEXNOW_ALLOWED_HOSTS=HOSTS)
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
    assert run(app, "process").exit_code == 0
    data = status_json(app)
    assert data["verdict"]["title"] == "Working"
    text = run(app, "status")
    assert text.exit_code == 0, text.output
    lines = text.output.splitlines()
    assert lines[0] == "Working"
    assert lines[1] == f"  {data['verdict']['reasons'][0]}"
    assert "1 URL(s) delivered in the last 24 hours" in lines[1]
    assert not any(line.startswith("Engine ") for line in lines)  # one engine, no pause, no budget: no engine line


def test_a_429_pause_is_shown_with_the_verdict_of_the_json(make_app, endpoint) -> None:
    app = make_app(INDEXNOW_ALLOWED_HOSTS=HOSTS)
    endpoint.default = Reply(429, headers={"Retry-After": "600"})
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
    assert run(app, "process").exit_code == 0
    assert len(endpoint.received) == 1

    data = status_json(app)
    assert data["endpoint_paused_until"] is not None
    verdict = data["verdict"]
    assert (verdict["level"], verdict["title"]) == ("warning", "Needs attention")
    assert any("asked to pause (HTTP 429)" in reason for reason in verdict["reasons"])

    text = run(app, "status")
    assert text.exit_code == 3, text.output  # Needs attention
    lines = text.output.splitlines()
    assert lines[0] == verdict["title"]
    for reason in verdict["reasons"]:
        assert f"  {reason}" in lines
    (engine,) = data["engines"]  # one engine only, yet its pause is shown
    assert (
        f"Engine {engine['endpoint']}: 1 pending, 0 processing, 0 failed; "
        f"paused until {data['endpoint_paused_until']} (HTTP 429)"
    ) in lines


def test_the_pause_names_the_status_that_asked_for_it(make_app, endpoint) -> None:
    app = make_app(INDEXNOW_ALLOWED_HOSTS=HOSTS)
    endpoint.default = Reply(503, headers={"Retry-After": "600"})
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
    assert run(app, "process").exit_code == 0
    data = status_json(app)
    assert any("asked to pause (HTTP 503)" in reason for reason in data["verdict"]["reasons"])
    engine_lines = [line for line in run(app, "status").output.splitlines() if line.startswith("Engine ")]
    assert len(engine_lines) == 1 and engine_lines[0].endswith("(HTTP 503)"), engine_lines


def test_not_sending_exits_4(make_app) -> None:
    app = make_app(INDEXNOW_KEY=None)
    result = run(app, "status")
    assert result.exit_code == 4, result.output
    assert result.output.splitlines()[0] == "Not sending"
    assert status_json(app)["verdict"]["level"] == "error"



def redis_app(make_app, url: str) -> Flask:
    return make_app(
        INDEXNOW_ALLOWED_HOSTS=HOSTS,
        INDEXNOW_CACHE_TYPE="RedisCache",
        INDEXNOW_CACHE_REDIS_URL=url,
        INDEXNOW_CACHE_OPTIONS={"socket_timeout": SOCKET_TIMEOUT, "socket_connect_timeout": SOCKET_TIMEOUT},
    )


def test_the_cache_check_asks_redis(make_app, clock, private_redis) -> None:
    app = redis_app(make_app, private_redis.url)
    data = status_json(app)
    check = cache_check(data)
    assert check["ok"] is True, check
    assert "RedisCache works as a lock" in check["message"]
    assert data["verdict"]["level"] == "ok"

    private_redis.stop()
    data = status_json(app)
    check = cache_check(data)
    assert (check["ok"], check["status"]) == (False, "attention"), check
    assert "RedisCache does not answer" in check["message"]
    assert "per-process locks" in check["message"] and "request budgets" in check["message"]
    assert "socket_timeout" in check["fix"]
    assert (data["verdict"]["level"], data["verdict"]["title"]) == ("warning", "Needs attention")
    assert check["message"] in data["verdict"]["reasons"]
    text = run(app, "status")
    assert text.exit_code == 3
    assert text.output.splitlines()[0] == "Needs attention"
    assert "[!! ] Needs attention: RedisCache does not answer" in text.output

    private_redis.start()  # back on the same port
    clock.advance(WINDOW + 1)  # the breaker leaves a failed cache alone for a window
    assert cache_check(status_json(app))["ok"] is True


def test_the_page_shows_the_failing_cache_check(make_app, private_redis) -> None:
    app = redis_app(make_app, private_redis.url)
    ext(app).status_auth(lambda: True)
    client = app.test_client()
    assert client.get("/indexnow/status.json").get_json()["verdict"]["level"] == "ok"
    private_redis.stop()
    data = client.get("/indexnow/status.json").get_json()
    assert data["verdict"]["level"] == "warning"
    assert cache_check(data)["ok"] is False
    page = client.get("/indexnow/").get_data(as_text=True)
    assert "Needs attention" in page and "RedisCache does not answer" in page


def test_the_probe_key_lives_under_the_extension_prefix_and_expires(make_app, private_redis) -> None:
    """The probe writes one short-lived key under the extension's prefix (on a private Redis, to list its keys)."""
    import redis

    app = redis_app(make_app, private_redis.url)
    prefix = app.extensions["indexnow"].cache_key("probe:")
    assert cache_check(status_json(app))["ok"] is True
    client = redis.Redis.from_url(private_redis.url)
    probes = [key for key in client.scan_iter(count=1000) if b"probe:" in key]
    assert len(probes) == 1 and prefix.encode() in probes[0], probes
    assert 0 < client.ttl(probes[0]) <= 10
    client.close()
