"""Issue 18 (bad input): an upper-case letter in INDEXNOW_TABLE_PREFIX.

The ORM quotes table names; the hand-written SQL of the hot paths
(queuesql.py, delivery/setsql.py) did not, so on PostgreSQL ``Site_indexnow_queue`` was
folded to ``site_indexnow_queue``: every pass failed and the CLI said the
tables were missing. Every raw statement now takes its names from
``sqlutil.quoted_table``. Each surface is run here on a mixed-case prefix:
init-db, enqueue (one row and the bulk path), a pass that succeeds, one that
retries and one that fails for good, status, and prune.
"""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
import sqlalchemy as sa
from flask import Flask

from ..conftest import RUN_PREFIX, rows
from ..endpoint_server import Reply
from .conftest import ext, state_of

pytestmark = pytest.mark.every_backend  # case folding of unquoted names is each database's own rule


def run(app: Flask, *args: str):
    return app.test_cli_runner().invoke(args=["indexnow", *args])


@pytest.fixture
def mixed(make_app, endpoint) -> Flask:
    prefix = f"Site{uuid.uuid4().hex[:4]}_{RUN_PREFIX}"
    assert prefix != prefix.lower()
    app = make_app(create_tables=False, INDEXNOW_TABLE_PREFIX=prefix, INDEXNOW_RETRY_DELAY=0,
                   INDEXNOW_MAX_ATTEMPTS=2)
    created = run(app, "init-db")
    assert created.exit_code == 0 and f"{prefix}indexnow_queue" in created.output, created.output
    return app


def test_every_surface_works_with_a_mixed_case_prefix(mixed: Flask, endpoint, clock) -> None:
    app = mixed
    endpoint.script(Reply(200), Reply(500), Reply(500))
    with app.app_context():
        ext(app).enqueue("https://example.com/one")  # the one-row upsert
        result = ext(app).enqueue_many([f"https://example.com/bulk-{n}" for n in range(3)])  # the bulk upsert
        assert result.queued == 3
        assert ext(app).process_queue().succeeded == 4  # the set-based end of a delivered batch
        ext(app).enqueue("https://example.com/two")
        ext(app).enqueue("https://example.com/two")  # the upsert's conflict branch, on a real row
        assert ext(app).process_queue().retried == 1  # the retry UPDATE
        clock.advance(1)
        assert ext(app).process_queue().failed == 1  # the last attempt: failed for good
    assert [(r.url, r.status) for r in rows(app)] == [("https://example.com/two", "failed")]
    assert sorted(r.status for r in rows(app, "History")) == ["failed", "retry"] + ["success"] * 4

    status = run(app, "status", "--json")
    assert status.exit_code == 0, status.output
    assert "missing" not in status.output and '"failed": 1' in status.output

    with app.app_context():
        state = state_of(app)
        with state.db.engine.begin() as connection:
            connection.execute(sa.update(state.models.history).values(created_at=clock.now - timedelta(days=40)))
    pruned = run(app, "prune-history", "--days", "30")
    assert pruned.exit_code == 0 and "pruned 6 history row(s)" in pruned.output, pruned.output
    assert rows(app, "History") == []
    again = run(app, "init-db")
    assert again.exit_code == 0 and "already exist" in again.output, again.output
