"""SPEC §7: the CLI commands of the core, and their errors."""

from __future__ import annotations

import json
import re

import pytest
from flask import Flask

from flask_indexnow import IndexNow

from ..conftest import RUN_PREFIX, rows


def run(app: Flask, *args: str):
    return app.test_cli_runner().invoke(args=["indexnow", *args])


def ext(app: Flask) -> IndexNow:
    return app.extensions["indexnow"].extension  # type: ignore[no-any-return]


def test_enqueue_and_process(app: Flask, endpoint) -> None:
    result = run(app, "enqueue", "https://example.com/a", "https://example.com/b")
    assert result.exit_code == 0, result.output
    assert "Queued 2" in result.output
    result = run(app, "process")
    assert result.exit_code == 0, result.output
    assert "succeeded 2" in result.output
    assert rows(app) == []


def test_enqueue_delete(app: Flask) -> None:
    assert run(app, "enqueue", "--delete", "https://example.com/a").exit_code == 0
    assert rows(app)[0].action == "delete"


@pytest.mark.parametrize("bad", ["http://localhost/x", "ftp://example.com/", "not-a-url"])
def test_enqueue_bad_url_is_one_line_and_queues_nothing(app: Flask, bad: str) -> None:
    result = run(app, "enqueue", "https://example.com/ok", bad)
    assert result.exit_code == 1
    assert result.output.count("\n") == 1 and result.output.startswith("Error: ")
    assert "Traceback" not in result.output
    assert rows(app) == []


def test_process_refuses_with_an_invalid_key(make_app) -> None:
    app = make_app(INDEXNOW_KEY="bad")
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
    result = run(app, "process")
    assert result.exit_code == 1
    assert "INDEXNOW_KEY" in result.output
    assert len(rows(app)) == 1


def test_process_with_limit(app: Flask, endpoint) -> None:
    ext(app).enqueue_many([f"https://example.com/{n}" for n in range(5)])
    assert run(app, "process", "--limit", "2").exit_code == 0
    assert len(rows(app)) == 3
    assert run(app, "process", "--limit", "0").exit_code == 2  # click's usage error


def test_status_text_and_json(app: Flask, clock) -> None:
    ext(app).enqueue("https://example.com/a")
    ext(app).enqueue("https://example.com/b", available_at=clock.now.replace(year=clock.now.year + 1))
    text = run(app, "status")
    assert text.exit_code == 3  # Needs attention: this app's host allow-list is open
    assert text.output.startswith("Needs attention\n")
    assert "2 pending (1 due now, 1 waiting)" in text.output
    data = json.loads(run(app, "status", "--json").output)
    assert data["queue"]["pending"] == 2
    assert data["queue"]["due_now"] == 1
    assert data["queue"]["waiting"] == 1
    assert {c["name"] for c in data["checks"]} >= {"key", "key_file", "endpoint", "cache"}


def test_status_explains_a_bad_key(make_app) -> None:
    app = make_app(INDEXNOW_KEY=None)
    output = run(app, "status").output
    assert "INDEXNOW_KEY is not set" in output and "key generate" in output


def test_retry_failed(app: Flask) -> None:
    ext(app).enqueue("https://example.com/a")
    state = app.extensions["indexnow"]
    table = state.models.Queue.__table__
    with state.db.engine.begin() as connection:
        connection.execute(table.update().values(status="failed", attempts=5, last_error="HTTP 403"))
    result = run(app, "retry-failed")
    assert result.exit_code == 0 and "1 failed row(s) back to pending" in result.output
    row = rows(app)[0]
    assert (row.status, row.attempts, row.last_error) == ("pending", 0, None)


@pytest.mark.every_backend  # DDL differs by database
def test_init_db_creates_the_tables_once(make_app) -> None:
    app = make_app(create_tables=False, INDEXNOW_TABLE_PREFIX=f"{RUN_PREFIX}initdb_")
    first = run(app, "init-db")
    assert first.exit_code == 0, first.output
    assert "initdb_indexnow_queue" in first.output
    second = run(app, "init-db")
    assert "already exist" in second.output
    with app.app_context():
        state = app.extensions["indexnow"]
        state.db.metadata.drop_all(state.db.engine, tables=state.models.tables)


@pytest.mark.every_backend  # each driver words a missing table its own way
def test_missing_tables_is_a_clear_error(make_app) -> None:
    app = make_app(create_tables=False, INDEXNOW_TABLE_PREFIX=f"{RUN_PREFIX}absent_")
    result = run(app, "status")
    assert result.exit_code == 1
    assert "init-db" in result.output and "Traceback" not in result.output


def test_key_generate() -> None:
    app = Flask(__name__)
    app.config["SQLALCHEMY_DATABASE_URI"] = "sqlite://"
    from flask_sqlalchemy import SQLAlchemy

    SQLAlchemy().init_app(app)
    IndexNow(app)
    # The first line: click before 8.2 (the floor is 8.1.3) mixes the stderr hint into stdout.
    keys = {run(app, "key", "generate").stdout.strip().splitlines()[0] for _ in range(3)}
    assert len(keys) == 3
    assert all(re.fullmatch(r"[0-9a-f]{32}", key) for key in keys)
