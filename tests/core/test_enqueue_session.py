"""SPEC §3: ``enqueue(commit=True)`` commits the host's ``db.session``, whatever it holds.

A session with nothing of the host's in it is not needed for the write: the
row goes in a short transaction of its own on the same engine (issue 11 §3).
A session with work of its own (added, changed or deleted objects, an open
transaction) is the one written in and committed, as before.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from flask import Flask
from flask_sqlalchemy import SQLAlchemy

from flask_indexnow import IndexNow, queue

from ..conftest import RUN_PREFIX, rows, site_table

pytestmark = pytest.mark.every_backend  # transactions and autocommit differ by database


class Host:
    def __init__(self, app: Flask, db: SQLAlchemy, note: Any) -> None:
        self.app, self.db, self.Note = app, db, note

    @property
    def ext(self) -> IndexNow:
        return self.app.extensions["indexnow"].extension  # type: ignore[no-any-return]

    def notes_seen_from_outside(self) -> list[str]:
        with self.db.engine.connect() as connection:
            return sorted(connection.execute(sa.select(self.Note.__table__.c.text)).scalars())

    def queued(self) -> list[str]:
        return [r.url for r in rows(self.app)]


@pytest.fixture
def host(make_app) -> Iterator[Host]:
    db = SQLAlchemy()

    class Note(db.Model):  # type: ignore[name-defined]
        __tablename__ = f"{RUN_PREFIX}enqueue_notes"
        id = sa.Column(sa.Integer, primary_key=True)
        text = sa.Column(sa.String(100), nullable=False)

    app = make_app(db=db)
    with app.app_context():
        with site_table(db, Note):
            yield Host(app, db, Note)


def test_added_objects_are_committed_with_the_row(host: Host) -> None:
    host.db.session.add(host.Note(text="added"))
    host.ext.enqueue("https://example.com/a")
    assert host.notes_seen_from_outside() == ["added"]
    assert host.queued() == ["https://example.com/a"]


def test_changed_and_flushed_work_is_committed_with_the_row(host: Host) -> None:
    note = host.Note(text="first")
    host.db.session.add(note)
    host.db.session.commit()
    note.text = "changed"  # dirty, no transaction begun yet
    host.ext.enqueue("https://example.com/a")
    assert host.notes_seen_from_outside() == ["changed"]
    host.db.session.add(host.Note(text="flushed"))
    host.db.session.flush()  # an open transaction
    host.ext.enqueue_many(["https://example.com/b"])
    assert host.notes_seen_from_outside() == ["changed", "flushed"]
    assert host.queued() == ["https://example.com/a", "https://example.com/b"]


def test_an_idle_session_stays_idle_and_usable(host: Host) -> None:
    session = host.db.session()
    host.ext.enqueue("https://example.com/a")
    host.ext.enqueue_many(["https://example.com/b", "https://example.com/c"])
    assert host.queued() == ["https://example.com/a", "https://example.com/b", "https://example.com/c"]
    assert not session.in_transaction()
    host.db.session.add(host.Note(text="later"))
    host.db.session.commit()
    assert host.notes_seen_from_outside() == ["later"]


def test_commit_false_still_joins_the_transaction_of_an_idle_session(host: Host) -> None:
    host.ext.enqueue("https://example.com/a", commit=False)
    host.ext.enqueue_many(["https://example.com/b"], commit=False)
    host.db.session.rollback()
    assert host.queued() == []


def _queue_writes_in_autocommit(host: Host, work: Any) -> list[bool]:
    """For each statement that wrote the queue (or its inbox) while ``work()`` ran: was it sent in autocommit?"""
    seen: list[bool] = []
    models = host.app.extensions["indexnow"].models
    tables = (models.queue.name, models.inbox.name)

    def record(connection: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        target = statement.split("(")[0]
        if statement.lstrip().upper().startswith("INSERT INTO") and any(name in target for name in tables):
            seen.append(connection.get_execution_options().get("isolation_level") == "AUTOCOMMIT")

    sa.event.listen(host.db.engine, "before_cursor_execute", record)
    try:
        work()
    finally:
        sa.event.remove(host.db.engine, "before_cursor_execute", record)
    return seen


def test_a_single_enqueue_on_an_idle_session_is_one_statement_in_autocommit(host: Host, backend: str) -> None:
    # PostgreSQL and SQLite switch to autocommit on the client: one round trip instead of
    # BEGIN, upsert, COMMIT. MySQL/MariaDB would pay two round trips to switch: a transaction.
    seen = _queue_writes_in_autocommit(host, lambda: host.ext.enqueue("https://example.com/a"))
    assert seen == [backend != "mariadb"]
    assert host.queued() == ["https://example.com/a"]  # committed: seen from another connection


def test_the_ledger_needs_a_transaction(host: Host) -> None:
    # With a fingerprint the write reads the ledger first: several statements, one transaction.
    state = host.app.extensions["indexnow"]
    seen = _queue_writes_in_autocommit(host, lambda: queue.enqueue(state, "https://example.com/a", fingerprint="v1"))
    assert seen == [False]
    assert host.queued() == ["https://example.com/a"]


def test_a_session_with_work_of_its_own_is_never_switched(host: Host) -> None:
    host.db.session.add(host.Note(text="added"))
    seen = _queue_writes_in_autocommit(host, lambda: host.ext.enqueue("https://example.com/a"))
    assert seen == [False]
    assert host.notes_seen_from_outside() == ["added"]
