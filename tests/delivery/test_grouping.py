"""One POST per host, the exact JSON body, keyLocation, and at most 10,000 URLs a request (SPEC §4)."""

from __future__ import annotations

import json

import pytest

from flask_indexnow.delivery.endpoint import MAX_URLS_PER_REQUEST

from ..conftest import KEY
from .conftest import ext, history_rows, queue_rows


def test_one_post_per_host_with_the_exact_body(make_app, endpoint, clock):
    app = make_app()
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
        ext(app).enqueue("https://other.org/x?q=1")
        ext(app).enqueue("https://example.com/b", "delete")
        ext(app).enqueue("http://EXAMPLE.com:8080/c#frag")
        result = ext(app).process_queue()
    assert (result.claimed, result.succeeded, result.requests) == (4, 4, 2)
    bodies = {request.json["host"]: request.json for request in endpoint.received}
    assert bodies == {
        "example.com": {
            "host": "example.com",
            "key": KEY,
            "keyLocation": f"https://example.com/{KEY}.txt",
            "urlList": ["https://example.com/a", "https://example.com/b", "http://example.com:8080/c"],
        },
        "other.org": {
            "host": "other.org",
            "key": KEY,
            "keyLocation": f"https://other.org/{KEY}.txt",
            "urlList": ["https://other.org/x?q=1"],
        },
    }
    for request in endpoint.received:
        assert request.headers["Content-Type"] == "application/json; charset=utf-8"
        assert request.path == "/indexnow"
        assert list(request.json) == ["host", "key", "keyLocation", "urlList"]
    assert queue_rows(app) == []


@pytest.mark.every_backend  # each database orders its writes its own way
def test_enqueue_many_keeps_each_hosts_rows_together(make_app, endpoint, clock):
    # URLs that alternate between hosts: the rows are written in URL order, so the
    # oldest rows a small pass claims are few hosts' (few POSTs), not one URL of each.
    app = make_app(INDEXNOW_BATCH_SIZE=10)
    hosts = [f"site{n}.example.com" for n in range(4)]
    with app.app_context():
        ext(app).enqueue_many([f"https://{hosts[n % 4]}/page/{n}" for n in range(40)])
        result = ext(app).process_queue()
    assert (result.claimed, result.requests) == (10, 1)
    assert len(endpoint.received[0].json["urlList"]) == 10


def test_key_location_template(make_app, endpoint, clock):
    app = make_app(INDEXNOW_KEY_LOCATION="https://static.{host}/keys/{key}.txt")
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
        ext(app).enqueue("https://other.org/b")
        ext(app).process_queue()
    locations = {request.json["host"]: request.json["keyLocation"] for request in endpoint.received}
    assert locations == {
        "example.com": f"https://static.example.com/keys/{KEY}.txt",
        "other.org": f"https://static.other.org/keys/{KEY}.txt",
    }


def test_key_location_without_placeholders_is_used_as_is(make_app, endpoint, clock):
    app = make_app(INDEXNOW_KEY_LOCATION="https://cdn.example.net/indexnow-key.txt")
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
        ext(app).process_queue()
    assert endpoint.received[0].json["keyLocation"] == "https://cdn.example.net/indexnow-key.txt"


def test_unicode_urls_are_sent_as_utf8_json(make_app, endpoint, clock):
    """SPEC §13: a non-ASCII path is stored and sent percent-encoded as UTF-8 (before: as raw text)."""
    app = make_app()
    with app.app_context():
        ext(app).enqueue("https://example.com/caf\u00e9/\u65e5\u672c")
        ext(app).process_queue()
    body = endpoint.received[0].body
    assert json.loads(body.decode("utf-8"))["urlList"] == ["https://example.com/caf%C3%A9/%E6%97%A5%E6%9C%AC"]


def test_at_most_10000_urls_a_request(make_app, endpoint, clock):
    assert MAX_URLS_PER_REQUEST == 10_000
    app = make_app()
    urls = [f"https://example.com/p/{i}" for i in range(10_001)]
    with app.app_context():
        queued = ext(app).enqueue_many(urls)
        ext(app).enqueue_many(["https://other.org/1", "https://other.org/2"])
        assert queued.queued == 10_001
        result = ext(app).process_queue(limit=20_000)
    assert (result.claimed, result.succeeded, result.requests) == (10_003, 10_003, 3)
    sizes = sorted((request.json["host"], len(request.json["urlList"])) for request in endpoint.received)
    assert sizes == [("example.com", 1), ("example.com", 10_000), ("other.org", 2)]
    assert sorted(endpoint.urls_received()) == sorted(urls + ["https://other.org/1", "https://other.org/2"])
    assert queue_rows(app) == []
    assert len(history_rows(app)) == 10_003
