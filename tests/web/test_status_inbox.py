"""Issue 18: what waits in the inbox is counted on every surface an operator reads.

Events saved inside the site's transactions wait in the inbox until the next
pass merges them; no pass runs here. The status page, ``status.json`` and
``flask indexnow status`` (text and ``--json``) must count them as pending
(and say how many are in the inbox), or a busy site would look idle.
"""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from flask_indexnow import inbox

from .conftest import PREFIX, extension, insert, queue_row

pytestmark = pytest.mark.every_backend  # the counts are SQL of each database

INBOX = ["https://example.com/a", "https://example.com/b", "https://example.com/c"]


def fill(app, clock) -> None:
    """One row in the queue, due; three events in the inbox (queued in the site's transaction, committed)."""
    insert(app, "Queue", queue_row("https://example.com/queued", when=clock.now - timedelta(minutes=1)))
    state = app.extensions["indexnow"]
    with app.app_context():
        for url in INBOX:
            extension(app).enqueue(url, commit=False)
        state.db.session.commit()
        with state.engine().connect() as connection:
            assert inbox.count(state, connection) == len(INBOX)  # no pass merged them


def expected_queue(data: dict) -> None:
    q = data["queue"]
    assert q["inbox"] == 3 and q["pending"] == 4 and q["total"] == 4 and q["due_now"] == 4, q


def test_status_json_counts_the_inbox(status_app, clock):
    fill(status_app, clock)
    expected_queue(status_app.test_client().get(PREFIX + "/status.json").get_json())


def test_the_status_page_counts_the_inbox(status_app, clock):
    fill(status_app, clock)
    page = status_app.test_client().get(PREFIX + "/").get_data(as_text=True)
    assert 'id="count-pending">' in page
    pending = page.split('id="count-pending">', 1)[1].split('<span class="value">', 1)[1].split("<", 1)[0]
    assert pending.strip() == "4", pending
    assert 'id="count-due">4<' in page
    assert 'inbox">3' in page, [line for line in page.splitlines() if "inbox" in line.lower()]


def test_the_cli_status_counts_the_inbox(status_app, clock):
    fill(status_app, clock)
    runner = status_app.test_cli_runner()
    text = runner.invoke(args=["indexnow", "status"]).output
    assert "Queue: 4 pending (4 due now, 0 waiting, 3 in the inbox)" in text, text
    result = runner.invoke(args=["indexnow", "status", "--json"])
    assert result.exit_code == 0, result.output
    expected_queue(json.loads(result.output))
