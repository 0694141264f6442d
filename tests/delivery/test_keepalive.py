"""Keep-alive: the app's one HTTP session reuses its connection across POSTs and passes."""

from __future__ import annotations

import threading

from flask_indexnow.outbound import app_session

from ..endpoint_server import EndpointServer, Reply
from .conftest import ext, state_of

HOSTS = [f"site{n}.example" for n in range(40)]


def count_connections(endpoint: EndpointServer) -> list[int]:
    """Count the TCP connections the endpoint accepts from now on."""
    accepted = [0]
    lock = threading.Lock()
    accept = endpoint.httpd.get_request

    def get_request():  # type: ignore[no-untyped-def]
        connection = accept()
        with lock:
            accepted[0] += 1
        return connection

    endpoint.httpd.get_request = get_request  # type: ignore[method-assign]
    return accepted


def fill(app, path: str) -> None:
    with app.app_context():
        for host in HOSTS:
            ext(app).enqueue(f"https://{host}/{path}")


def test_one_connection_serves_every_post_of_two_passes(make_app, endpoint, clock):
    app = make_app(INDEXNOW_ALLOWED_HOSTS=HOSTS)
    accepted = count_connections(endpoint)
    fill(app, "first")
    with app.app_context():
        first = ext(app).process_queue()
    assert (first.requests, len(endpoint.received)) == (40, 40)
    assert accepted[0] <= 2
    fill(app, "second")
    with app.app_context():
        second = ext(app).process_queue()
    assert (second.succeeded, len(endpoint.received)) == (40, 80)
    assert accepted[0] <= 2


def test_error_bodies_are_read_and_the_connection_kept(make_app, endpoint, clock):
    endpoint.default = Reply(422, {"Content-Type": "application/json"}, b'{"message": "URL does not belong"}')
    app = make_app(INDEXNOW_ALLOWED_HOSTS=HOSTS)
    accepted = count_connections(endpoint)
    fill(app, "a")
    with app.app_context():
        result = ext(app).process_queue()
    assert result.failed == 40
    assert accepted[0] <= 2


def test_a_huge_body_is_not_downloaded_its_connection_is_closed(make_app, endpoint, clock):
    endpoint.default = Reply(200, {"Content-Type": "text/plain"}, b"x" * 5_000_000)
    app = make_app(INDEXNOW_ALLOWED_HOSTS=HOSTS[:3])
    accepted = count_connections(endpoint)
    with app.app_context():
        for host in HOSTS[:3]:
            ext(app).enqueue(f"https://{host}/a")
        result = ext(app).process_queue()
    assert result.succeeded == 3
    assert accepted[0] == 3  # each long answer closed its connection rather than being read to its end


def test_the_session_is_made_once_per_app_and_shared_by_threads(make_app):
    app, other = make_app(), make_app()
    sessions: list[object] = []
    threads = [threading.Thread(target=lambda: sessions.append(app_session(state_of(app)))) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({id(s) for s in sessions}) == 1
    assert app_session(state_of(other)) is not sessions[0]
