"""A pass refuses to send with a bad key or endpoint, and then touches nothing (SPEC §2, §4)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from flask_indexnow.delivery import worker

from .conftest import ext, history_rows, queue_rows, state_of


def _port(endpoint) -> int:
    return int(endpoint.url.rsplit(":", 1)[1].split("/", 1)[0])


@pytest.mark.parametrize(
    ("config", "reason"),
    [
        ({"INDEXNOW_KEY": None}, "INDEXNOW_KEY is not set"),
        ({"INDEXNOW_KEY": ""}, "INDEXNOW_KEY is not set"),
        ({"INDEXNOW_KEY": "short"}, "INDEXNOW_KEY must be 8-128 characters"),
        ({"INDEXNOW_KEY": "has spaces in it"}, "INDEXNOW_KEY must be 8-128 characters"),
        ({"INDEXNOW_KEY": "k" * 129}, "INDEXNOW_KEY must be 8-128 characters"),
        ({"INDEXNOW_ALLOW_PRIVATE_ENDPOINT": False}, "must use https"),
        ({"INDEXNOW_ALLOW_PRIVATE_ENDPOINT": False, "INDEXNOW_ENDPOINT": "https://127.0.0.1:{port}/indexnow"},
         "not a public host"),
        ({"INDEXNOW_ALLOW_PRIVATE_ENDPOINT": False, "INDEXNOW_ENDPOINT": "https://localhost:{port}/indexnow"},
         "not a public host"),
        ({"INDEXNOW_ALLOW_PRIVATE_ENDPOINT": False, "INDEXNOW_ENDPOINT": "https://10.1.2.3/indexnow"},
         "not a public host"),
        ({"INDEXNOW_ALLOW_PRIVATE_ENDPOINT": False, "INDEXNOW_ENDPOINT": "https://[::1]:{port}/indexnow"},
         "not a public host"),
        ({"INDEXNOW_ALLOW_PRIVATE_ENDPOINT": False, "INDEXNOW_ENDPOINT": "https://2130706433/indexnow"},
         "not a public host"),
        ({"INDEXNOW_ENDPOINT": ""}, "INDEXNOW_ENDPOINT is not set"),
        ({"INDEXNOW_ENDPOINT": "ftp://127.0.0.1:{port}/indexnow"}, "not an absolute http(s) URL"),
        ({"INDEXNOW_ENDPOINT": "127.0.0.1:{port}/indexnow"}, "not an absolute http(s) URL"),
        ({"INDEXNOW_ENDPOINT": "http://user:pw@127.0.0.1:{port}/indexnow"}, "user name or password"),
        ({"INDEXNOW_ENDPOINT": "http://127.0.0.1:99999/indexnow"}, "not a valid URL"),
        ({"INDEXNOW_ENABLED": False}, "INDEXNOW_ENABLED is False"),
    ],
)
# The refusal is judged before any query: the matrix runs on SQLite, the pass
# that follows a fixed setting (below) on all three databases.
def test_refused_pass_sends_nothing_and_changes_nothing(make_app, endpoint, clock, caplog, config, reason):
    config = {k: v.format(port=_port(endpoint)) if isinstance(v, str) else v for k, v in config.items()}
    app = make_app(INDEXNOW_STALE_AFTER=60, **config)
    with app.app_context():
        state = state_of(app)
        # Rows of every kind: due, waiting, failed and a stale claim.
        _seed(app, state, clock)
        before = queue_rows(app)
        assert len(before) == 4
        clock.advance(3600)
        result = ext(app).process_queue()
    assert reason in result.skipped_reason
    assert (result.claimed, result.succeeded, result.retried, result.failed, result.reset_stale) == (0, 0, 0, 0, 0)
    assert endpoint.received == []
    assert history_rows(app) == []
    assert queue_rows(app) == before
    assert reason in caplog.text


def _seed(app, state, clock) -> None:
    """Write rows straight to the table: with INDEXNOW_ENABLED False the API queues nothing."""
    from flask_indexnow.queue import make_entry, write_entries

    entries = [
        make_entry(state, "https://example.com/due"),
        make_entry(state, "https://example.com/later", available_at=clock.now + timedelta(hours=2)),
        make_entry(state, "https://example.com/failed"),
        make_entry(state, "https://example.com/stale"),
    ]
    with state.engine().begin() as connection:
        write_entries(state, connection, entries)
        queue = state.models.Queue.__table__
        connection.execute(queue.update().where(queue.c.url == "https://example.com/failed")
                           .values(status="failed", attempts=5, last_error="HTTP 400: x", last_http_status=400))
        connection.execute(queue.update().where(queue.c.url == "https://example.com/stale")
                           .values(status="processing", claimed_at=clock.now, claim_token="a" * 32))


def test_refusal_is_judged_again_on_every_pass(make_app, endpoint, clock):
    """Fixing the setting (a new app in a deploy) sends what was kept."""
    broken = make_app(INDEXNOW_KEY="bad key")
    with broken.app_context():
        ext(broken).enqueue("https://example.com/a")
        assert ext(broken).process_queue().skipped_reason
    fixed = make_app(create_tables=False)
    with fixed.app_context():
        assert ext(fixed).process_queue().succeeded == 1
    assert endpoint.urls_received() == ["https://example.com/a"]


def test_sending_problem_is_none_for_a_good_setup(make_app, endpoint):
    app = make_app()
    assert worker.sending_problem(state_of(app).settings) is None
