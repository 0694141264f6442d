"""A pass and an enqueue cost a fixed number of statements, whatever the number of rows (issue 11 §2, §3)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

import pytest
import sqlalchemy as sa

from flask_indexnow import queuesql
from flask_indexnow.models import url_hash

from ..endpoint_server import Reply
from .conftest import ext, history_rows, queue_rows, state_of

pytestmark = pytest.mark.every_backend  # the set-based statements differ by database

HOSTS = ("a.example.com", "b.example.com")


class Seen(list):
    """Statements run, plus how they were run."""

    executemany = False
    most_parameters = 0


@contextmanager
def statements(app) -> Iterator[Seen]:
    """The SQL statements ``app``'s engine runs inside the block (pings left out)."""
    seen = Seen()
    with app.app_context():
        engine = state_of(app).engine()

    def record(conn, cursor, statement, parameters, context, executemany):
        if statement.strip().upper() != "SELECT 1":  # pool_pre_ping
            seen.append(statement)
            seen.executemany |= executemany
            if not (executemany or statement.lstrip().upper().startswith("SELECT ID, HOST")):
                # (MariaDB's claim reads its rows, then marks them by id.)
                seen.most_parameters = max(seen.most_parameters, len(parameters or ()))

    sa.event.listen(engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        sa.event.remove(engine, "before_cursor_execute", record)


def _urls(count: int, tag: str) -> list[str]:
    return [f"https://{HOSTS[n % 2]}/{tag}/{n}" for n in range(count)]


def test_a_pass_costs_the_same_statements_for_10_or_400_rows(make_app, endpoint, clock):
    app = make_app(INDEXNOW_BATCH_SIZE=1000)
    counts = []
    with app.app_context():
        ext(app).process_queue()  # the first pass of a process also looks for stale claims
        for size, tag in ((10, "small"), (400, "big")):
            ext(app).enqueue_many(_urls(size, tag))
            with statements(app) as seen:
                assert ext(app).process_queue().succeeded == size
            counts.append(len(seen))
            # Rows are named by their claim, never one by one. (MariaDB marks its claim by
            # id and writes history from the pass's values: multi-row statements, still one each.)
            assert not seen.executemany
            mariadb = state_of(app).engine().dialect.name in ("mysql", "mariadb")
            assert seen.most_parameters <= (8 * size if mariadb else 12)
    assert counts[0] == counts[1]
    assert queue_rows(app) == []
    assert len(history_rows(app)) == 410
    assert {h.status for h in history_rows(app)} == {"success"}


def test_enqueue_many_writes_each_chunk_in_one_statement(make_app, clock):
    app = make_app()
    with app.app_context():
        with state_of(app).engine().connect() as connection:
            per_statement = queuesql.bulk_rows(connection)  # 500 on SQLite and MariaDB, 10,000 on PostgreSQL
        with statements(app) as seen:
            assert ext(app).enqueue_many(_urls(1200, "x")).queued == 1200
    assert not seen.executemany
    writes = [s for s in seen if s.lstrip().upper().startswith("INSERT")]
    assert len(writes) == -(-1200 // per_statement)
    assert len(queue_rows(app)) == 1200


def test_failures_are_set_based_too_and_keep_their_rules(make_app, endpoint, clock):
    app = make_app(INDEXNOW_MAX_ATTEMPTS=2, INDEXNOW_RETRY_DELAY=60)
    endpoint.default = Reply(503)
    with app.app_context():
        ext(app).enqueue_many(_urls(6, "f"))
        state = state_of(app)
        queue = state.models.Queue.__table__
        with state.engine().begin() as connection:  # two rows are on their last attempt
            connection.execute(queue.update().where(queue.c.url.like("%/f/0")).values(attempts=1))
            connection.execute(queue.update().where(queue.c.url.like("%/f/1")).values(attempts=1))
        result = ext(app).process_queue()
    assert (result.retried, result.failed) == (4, 2)
    rows = {r["url"].rsplit("/", 1)[1]: r for r in queue_rows(app)}
    assert {k: (r["status"], r["attempts"]) for k, r in rows.items()} == {
        "0": ("failed", 2), "1": ("failed", 2), "2": ("pending", 1), "3": ("pending", 1), "4": ("pending", 1),
        "5": ("pending", 1),
    }
    assert rows["0"]["available_at"] == rows["0"]["created_at"]  # a failed row keeps its time
    assert rows["2"]["available_at"] == clock.now + timedelta(seconds=60)
    assert {r["last_http_status"] for r in rows.values()} == {503}
    assert {r["claim_token"] for r in rows.values()} == {None}
    assert sorted((h.url.rsplit("/", 1)[1], h.status, h.attempts) for h in history_rows(app)) == [
        ("0", "failed", 2), ("1", "failed", 2), ("2", "retry", 1), ("3", "retry", 1), ("4", "retry", 1),
        ("5", "retry", 1),
    ]


def test_the_stale_sweep_runs_only_when_a_claim_can_be_stale(make_app, endpoint, clock):
    app = make_app(INDEXNOW_STALE_AFTER=900)

    def swept(seen: list[str]) -> bool:
        return any("min(" in s.lower() and "claimed_at" in s for s in seen)

    with app.app_context():
        ext(app).enqueue("https://a.example.com/1")
        with statements(app) as seen:
            ext(app).process_queue()
        assert swept(seen)  # the first pass of a process looks
        clock.advance(899)
        with statements(app) as seen:
            ext(app).process_queue()
        assert not swept(seen)  # nothing claimed then can be stale yet
        clock.advance(2)
        with statements(app) as seen:
            ext(app).process_queue()
        assert swept(seen)


def test_the_upsert_takes_any_text_whatever_the_database(make_app, clock):
    """PostgreSQL gets each column joined by a control character: a value holding it still arrives whole."""
    app = make_app()
    odd = "https://example.com/a\x1fb"  # never a valid URL; the write path must not depend on that
    with app.app_context():
        state = state_of(app)
        queue = state.models.Queue.__table__
        with state.engine().begin() as connection:
            queuesql.upsert_queue(connection, queue, [
                ("example.com", odd, "h1", "update", clock.now, "fp\x1f1"),
                ("example.com", "https://example.com/c", "h2", "delete", clock.now, None),
            ], clock.now)
    assert sorted((r["url"], r["action"], r["fingerprint"]) for r in queue_rows(app)) == [
        (odd, "update", "fp\x1f1"), ("https://example.com/c", "delete", None),
    ]
    with app.app_context(), state.engine().begin() as connection:  # the bulk path takes any text too
        queuesql.upsert_urls(connection, queue, [odd + "2"], ["example.com"], "update", clock.now, ("",), clock.now)
    assert {r["url"]: r["url_hash"] for r in queue_rows(app)}[odd + "2"] == url_hash(odd + "2")


def test_every_write_path_keys_a_url_by_the_same_hash(make_app, clock):
    """PostgreSQL hashes enqueue_many's URLs itself: the key must be the one Python computes elsewhere."""
    app = make_app(INDEXNOW_ENDPOINTS=["http://127.0.0.1:9/a", "http://127.0.0.1:9/b"])
    urls = ["https://example.com/\u00e9t\u00e9?q=\u00fc", "https://example.com/a", "https://b\u00fccher.example/x"]
    with app.app_context():
        assert ext(app).enqueue_many(urls).queued == 3
        rows = queue_rows(app)
        assert len(rows) == 6  # one per URL and engine
        assert all(r["url_hash"] == url_hash(r["url"]) for r in rows)
        for url in urls:  # the single path finds the same rows: no second row per engine
            ext(app).enqueue(url, "delete")
    rows = queue_rows(app)
    assert len(rows) == 6
    assert {r["action"] for r in rows} == {"delete"}
