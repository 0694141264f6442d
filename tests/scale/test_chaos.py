"""SPEC §4 under a misbehaving endpoint: every URL ends ``success`` or ``failed`` and
history records each attempt exactly as it went.

About 30% of the POSTs get a 500, 503 (with a Retry-After), 429, a timeout or
a reset connection, drawn from a seeded random generator, so a failure
reproduces. Passes run in the test process on the movable clock.
"""

from __future__ import annotations

import random
import threading

import pytest

from ..conftest import rows
from .conftest import count, ext, history_by_url
from .servers import Answer, CountingEndpoint

pytestmark = pytest.mark.every_backend  # claims and settle writes under load differ by database

SEED = 20240611
URLS = 600
HOSTS = 60
MAX_ATTEMPTS = 3
RETRY_DELAY = 60
RETRY_AFTER = 120
TIMEOUT = 1.0  # generous: a loaded machine must not turn a 200 into a timeout
#: answer kind → weight; 30% of the answers are failures.
KINDS = {"200": 70, "500": 8, "503": 5, "429": 5, "timeout": 6, "reset": 6}


def chaos(seed: int, unblock: threading.Event):
    rng = random.Random(seed)

    def decide(host: str, urls: list[str]) -> Answer:
        kind = rng.choices(list(KINDS), weights=list(KINDS.values()))[0]
        if kind == "timeout":
            return Answer(200, hold=unblock, delay=TIMEOUT * 4)
        if kind == "reset":
            return Answer(reset=True)
        headers = {"Retry-After": str(RETRY_AFTER)} if kind == "503" else {}
        return Answer(int(kind), headers=headers)

    return decide


def expected_history(answers: list[Answer]) -> list[tuple[str, int | None, int]]:
    """(status, http_status, attempts) of each history row, by SPEC §4's table."""
    expected = []
    for attempt, answer in enumerate(answers, start=1):
        timed_out = answer.hold is not None
        http_status = None if (timed_out or answer.reset) else answer.status
        if http_status is not None and 200 <= http_status < 300:
            status = "success"
        else:
            status = "failed" if attempt == MAX_ATTEMPTS else "retry"
        expected.append((status, http_status, attempt))
    return expected


def test_every_url_ends_success_or_failed_and_history_matches_the_attempts(make_app, clock):
    unblock = threading.Event()
    endpoint = CountingEndpoint(chaos(SEED, unblock)).start()
    try:
        app = make_app(
            INDEXNOW_ENDPOINT=endpoint.url, INDEXNOW_BATCH_SIZE=40, INDEXNOW_MAX_ATTEMPTS=MAX_ATTEMPTS,
            INDEXNOW_RETRY_DELAY=RETRY_DELAY, INDEXNOW_TIMEOUT=TIMEOUT,
        )
        urls = [f"https://site{n % HOSTS}.example.com/page/{n}" for n in range(URLS)]
        with app.app_context():
            ext(app).enqueue_many(urls)
            for _ in range(100):
                if count(app, status="pending") == 0:
                    break
                ext(app).process_queue()
                clock.advance(RETRY_AFTER + 1)  # past every retry delay, Retry-After and 429 pause
    finally:
        unblock.set()
        endpoint.stop()

    answers: dict[str, list[Answer]] = {url: [] for url in urls}
    for request in endpoint.requests:
        for url in request.urls:
            answers[url].append(request.answer)
    history = history_by_url(app)
    failed_rows = {row.url: row for row in rows(app, "Queue")}
    assert all(row.status == "failed" for row in failed_rows.values())  # nothing pending or processing

    for url in urls:
        expected = expected_history(answers[url])
        assert [(h.status, h.http_status, h.attempts) for h in history[url]] == expected, url
        final = expected[-1][0]
        assert final in ("success", "failed"), url
        if final == "success":
            assert url not in failed_rows
        else:
            assert failed_rows[url].attempts == MAX_ATTEMPTS

    # The chaos really happened: every kind of answer was seen, and some URLs failed for good.
    seen = {("timeout" if a.hold else "reset" if a.reset else str(a.status)) for r in endpoint.requests
            for a in [r.answer]}
    assert seen == set(KINDS)
    assert 0 < len(failed_rows) < URLS
