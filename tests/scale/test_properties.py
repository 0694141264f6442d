"""Property tests of the queue (SPEC §3, §4): random event sequences per URL,
interleaved with worker passes against a real endpoint.

Whatever the order of saves, publishes, unpublishes, deletes, direct
``enqueue``/``enqueue_many`` calls and passes (answered 200 or 500, some with
an event arriving while the POST is in flight), the queue holds exactly one
row per URL that still has something to send, with the action of that URL's
last event, and the attempts and status the passes gave it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flask_indexnow import signals

from ..conftest import rows
from .conftest import ext
from .servers import Answer, CountingEndpoint

URLS = [f"https://site{n % 2}.example.com/page/{n}" for n in range(4)]
MAX_ATTEMPTS = 3
EXAMPLES = {"sqlite": 60, "postgresql": 25, "mariadb": 20}

url_index = st.integers(0, len(URLS) - 1)
action = st.sampled_from(["update", "delete"])
operation = st.one_of(
    st.tuples(st.just("saved"), url_index, st.booleans()),
    st.tuples(st.just("published"), url_index),
    st.tuples(st.just("unpublished"), url_index),
    st.tuples(st.just("deleted"), url_index),
    st.tuples(st.just("enqueue"), url_index, action),
    st.tuples(st.just("enqueue_many"), st.lists(url_index, min_size=1, max_size=6), action),
    st.tuples(st.just("pass"), st.sampled_from([200, 500]), st.none() | st.tuples(url_index, action)),
)


@dataclass
class Expected:
    action: str
    attempts: int = 0
    status: str = "pending"


class Resource:
    """A page of the site as a signal sender describes it."""

    def __init__(self, url: str) -> None:
        self.url = url


def apply_event(app: Any, op: tuple[Any, ...]) -> dict[str, str]:
    """Send one event; return URL → the action it must leave in the queue."""
    kind, index, *rest = op
    if kind == "enqueue_many":
        urls = [URLS[i] for i in index]
        ext(app).enqueue_many(urls, rest[0])
        return dict.fromkeys(urls, rest[0])
    url = URLS[index]
    if kind == "saved":
        signals.resource_saved.send(app, url=url, published=rest[0])
        return {url: "update" if rest[0] else "delete"}
    if kind == "published":
        signals.resource_published.send(app, url=url)
        return {url: "update"}
    if kind == "unpublished":
        signals.resource_unpublished.send(app, url=url)
        return {url: "delete"}
    if kind == "deleted":
        page = Resource(url)
        signals.resource_before_delete.send(app, resource=page, url=page.url)
        signals.resource_deleted.send(app, resource=page)
        return {url: "delete"}
    ext(app).enqueue(url, rest[0])
    return {url: rest[0]}


def run_pass(app: Any, endpoint: CountingEndpoint, status: int, during: tuple[int, str] | None,
             model: dict[str, Expected]) -> None:
    """One worker pass; ``during``: an event sent from another thread while the first POST is in flight."""
    fired = threading.Event()
    errors: list[BaseException] = []

    def decide(host: str, urls: list[str]) -> Answer:
        if during is not None and not fired.is_set():
            fired.set()
            worker = threading.Thread(target=event_during)
            worker.start()
            worker.join()
        return Answer(status)

    def event_during() -> None:
        try:
            with app.app_context():
                ext(app).enqueue(URLS[during[0]], during[1])
        except BaseException as exc:  # noqa: BLE001 (reported by the test thread)
            errors.append(exc)

    endpoint.decide = decide
    before = {url: replace(expected) for url, expected in model.items()}
    ext(app).process_queue(limit=100)
    assert not errors, errors
    for url, expected in list(model.items()):
        if expected.status != "pending":
            continue
        if status == 200:
            del model[url]
        else:
            expected.attempts += 1
            expected.status = "failed" if expected.attempts >= MAX_ATTEMPTS else "pending"
    if during is not None:
        url = URLS[during[0]]
        if fired.is_set():  # the event survives the delivery under way, which no longer owns the row
            model[url] = after_event(before.get(url), during[1])
        else:  # nothing was due, so nothing was sent: the event simply comes after the pass
            ext(app).enqueue(url, during[1])
            model[url] = after_event(model.get(url), during[1])


def after_event(previous: Expected | None, action: str) -> Expected:
    """A new event's row: attempts spent on a row not failed are kept (issue 9 §7), else 0."""
    kept = previous.attempts if previous is not None and previous.status == "pending" else 0
    return Expected(action, kept)


def check(app: Any, model: dict[str, Expected]) -> None:
    found = rows(app, "Queue")
    keys = [(row.host, row.url) for row in found]
    assert len(keys) == len(set(keys)), "more than one row for a URL"
    assert {row.url: Expected(row.action, row.attempts, row.status) for row in found} == model


@pytest.mark.parametrize("backend", ["sqlite", "postgresql", "mariadb"])
def test_the_queue_holds_the_last_event_of_each_url(make_app, clock, backend):
    endpoint = CountingEndpoint().start()
    app = make_app(INDEXNOW_ENDPOINT=endpoint.url, INDEXNOW_RETRY_DELAY=0, INDEXNOW_MAX_ATTEMPTS=MAX_ATTEMPTS)
    state = app.extensions["indexnow"]

    @settings(max_examples=EXAMPLES[backend], deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(st.lists(operation, min_size=1, max_size=25))
    def sequence(ops: list[tuple[Any, ...]]) -> None:
        with app.app_context():
            with state.db.engine.begin() as connection:
                for table in state.models.tables:
                    connection.execute(sa.delete(table))
            model: dict[str, Expected] = {}
            for op in ops:
                clock.advance(1)
                if op[0] == "pass":
                    run_pass(app, endpoint, op[1], op[2], model)
                else:
                    for url, last in apply_event(app, op).items():
                        model[url] = after_event(model.get(url), last)
                check(app, model)

    try:
        sequence()
    finally:
        endpoint.stop()
