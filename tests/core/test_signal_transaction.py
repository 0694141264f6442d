"""Issue 9, point 4: a signal without ``session=`` never touches the host's transaction.

Its rows are written and committed on a connection of their own; the host's
``db.session`` is not flushed, committed or rolled back. On SQLite, while the
host holds the database's single write lock, the rows are written as soon as
the host's transaction ends (commit or rollback): never lost, never joined.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from flask import Flask
from flask_sqlalchemy import SQLAlchemy

from flask_indexnow import signals

from ..conftest import RUN_PREFIX, rows, site_table

pytestmark = pytest.mark.every_backend  # locks and transactions differ by database


class Host:
    def __init__(self, app: Flask, db: SQLAlchemy, note: Any) -> None:
        self.app, self.db, self.Note = app, db, note

    def notes_seen_from_outside(self) -> list[str]:
        """The notes another connection sees: only what the host committed."""
        with self.db.engine.connect() as connection:
            return list(connection.execute(sa.select(self.Note.__table__.c.text)).scalars())

    def queued(self) -> list[str]:
        return [r.url for r in rows(self.app)]


def host_app(make_app, **kwargs: Any) -> Iterator[Host]:
    db = SQLAlchemy()

    class Note(db.Model):  # type: ignore[name-defined]
        __tablename__ = f"{RUN_PREFIX}host_notes"
        id = sa.Column(sa.Integer, primary_key=True)
        text = sa.Column(sa.String(100), nullable=False)

    app = make_app(db=db, **kwargs)
    with app.app_context():
        with site_table(db, Note):
            yield Host(app, db, Note)


@pytest.fixture
def host(make_app) -> Iterator[Host]:
    yield from host_app(make_app)


def test_pending_host_changes_stay_pending_and_the_row_is_committed(host: Host) -> None:
    note = host.Note(text="half-done")
    host.db.session.add(note)
    signals.resource_saved.send(host.app, url="https://example.com/a")
    assert host.queued() == ["https://example.com/a"]  # committed: another connection sees it
    assert host.notes_seen_from_outside() == []  # the host's work was neither flushed nor committed
    assert note in host.db.session.new
    host.db.session.commit()
    assert host.notes_seen_from_outside() == ["half-done"]


def test_the_row_survives_a_host_rollback_even_while_the_host_holds_a_write_lock(host: Host) -> None:
    host.db.session.add(host.Note(text="flushed"))
    host.db.session.flush()  # an open write transaction (on SQLite: the database's write lock)
    signals.resource_saved.send(host.app, url="https://example.com/b")
    assert host.notes_seen_from_outside() == []
    if host.db.engine.dialect.name != "sqlite":
        assert host.queued() == ["https://example.com/b"]  # at once, on its own connection
    host.db.session.rollback()
    assert host.notes_seen_from_outside() == []
    assert host.queued() == ["https://example.com/b"]  # not lost with the host's work


@pytest.mark.parametrize("backend", ["sqlite"])  # SQLite's single write lock only
def test_on_sqlite_a_locked_database_delays_the_row_until_the_host_commits(host: Host) -> None:
    host.db.session.add(host.Note(text="flushed"))
    host.db.session.flush()
    signals.resource_saved.send(host.app, url="https://example.com/c")
    assert host.queued() == []  # waiting for the lock the host holds: written when it ends
    host.db.session.commit()
    assert host.notes_seen_from_outside() == ["flushed"]
    assert host.queued() == ["https://example.com/c"]


def test_a_failing_queue_write_leaves_the_host_work_alone(make_app, caplog) -> None:
    for host in host_app(make_app, create_tables=False, INDEXNOW_TABLE_PREFIX="absent_"):
        note = host.Note(text="pending")
        host.db.session.add(note)
        with caplog.at_level(logging.WARNING, logger="flask_indexnow"):
            signals.resource_saved.send(host.app, url="https://example.com/d")  # never raises
        assert "saved event skipped" in caplog.text
        assert note in host.db.session.new  # not rolled back, not flushed
        host.db.session.commit()
        assert host.notes_seen_from_outside() == ["pending"]


def test_a_failing_queue_write_does_not_poison_a_flushed_host_transaction(make_app, caplog) -> None:
    for host in host_app(make_app, create_tables=False, INDEXNOW_TABLE_PREFIX="absent_"):
        host.db.session.add(host.Note(text="flushed"))
        host.db.session.flush()
        signals.resource_saved.send(host.app, url="https://example.com/e")
        host.db.session.add(host.Note(text="more"))
        host.db.session.commit()  # the host's transaction is intact
        assert sorted(host.notes_seen_from_outside()) == ["flushed", "more"]
        assert "https://example.com/e" in caplog.text or "skipped" in caplog.text


def test_with_session_the_row_joins_the_host_transaction(host: Host) -> None:
    """The other rule, as before: ``session=`` means the same transaction as the content."""
    host.db.session.add(host.Note(text="together"))
    host.db.session.flush()
    signals.resource_saved.send(host.app, url="https://example.com/f", session=host.db.session())
    host.db.session.rollback()
    assert host.queued() == []
