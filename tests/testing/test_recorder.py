"""flask_indexnow.testing.RecordingEndpoint: records, answers what it is told, binds loopback only."""

from __future__ import annotations

import socket

import pytest
import requests

from flask_indexnow.testing import RecordingEndpoint, Reply


def post(endpoint: RecordingEndpoint, body: object) -> requests.Response:
    with requests.Session() as http:
        return http.post(endpoint.url, json=body, timeout=10, allow_redirects=False)


def test_records_bodies_and_answers_200_by_default() -> None:
    with RecordingEndpoint() as endpoint:
        first = {"host": "example.com", "key": "k" * 8, "keyLocation": "https://example.com/kkkkkkkk.txt",
                 "urlList": ["https://example.com/a", "https://example.com/b"]}
        assert post(endpoint, first).status_code == 200
        assert post(endpoint, {"host": "other.org", "urlList": ["https://other.org/c"]}).status_code == 200
        assert endpoint.urls == ["https://example.com/a", "https://example.com/b", "https://other.org/c"]
        assert endpoint.bodies[0] == first
        [one, two] = endpoint.requests
        assert (one.host, one.key, one.key_location, one.path) == (
            "example.com", "kkkkkkkk", "https://example.com/kkkkkkkk.txt", "/indexnow")
        assert two.key is None and two.urls == ["https://other.org/c"]


def test_scripted_statuses_and_retry_after_then_the_default() -> None:
    with RecordingEndpoint() as endpoint:
        endpoint.script(Reply(429, retry_after=120), 503, Reply(301, headers={"Location": "https://x.example/"}))
        answers = [post(endpoint, {"urlList": []}) for _ in range(4)]
        assert [a.status_code for a in answers] == [429, 503, 301, 200]
        assert answers[0].headers["Retry-After"] == "120"
        assert answers[2].headers["Location"] == "https://x.example/"
        endpoint.answer(403, body="key not valid")
        refused = post(endpoint, {"urlList": []})
        assert (refused.status_code, refused.text) == (403, "key not valid")
        endpoint.reset()
        assert endpoint.requests == [] and post(endpoint, {}).status_code == 200


def test_decide_garbage_and_reset_connections() -> None:
    with RecordingEndpoint() as endpoint:
        endpoint.decide = lambda request: Reply(reset=True) if "drop" in request.urls else Reply(202)
        assert post(endpoint, {"urlList": ["keep"]}).status_code == 202
        with pytest.raises(requests.ConnectionError):
            post(endpoint, {"urlList": ["drop"]})
        with requests.Session() as http:
            http.post(endpoint.url, data=b"\x00not json", timeout=10)
        assert endpoint.bodies[-1] is None and endpoint.requests[-1].urls == []


def test_binds_loopback_only_and_frees_its_port() -> None:
    endpoint = RecordingEndpoint().start()
    host, port = endpoint.httpd.server_address[:2]
    assert host == "127.0.0.1" and endpoint.url == f"http://127.0.0.1:{port}/indexnow"
    endpoint.stop()
    endpoint.stop()  # twice is harmless
    with socket.socket() as sock, pytest.raises(ConnectionRefusedError):
        sock.connect(("127.0.0.1", port))
    RecordingEndpoint().stop()  # never started: stop does not hang
