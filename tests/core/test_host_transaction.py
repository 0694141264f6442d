"""Issue 18, items 1 and 3: the site's transaction and the extension's own writes under database refusals.

1. When the extension's write inside the site's transaction meets an error that
   ended that transaction (a deadlock), the site's commit fails with it: never a
   "skipped" log line and a commit that silently drops the edit or its event.
3. A write that owns its transaction retries a transient refusal with the
   worker's rule; when the retries run out, ``enqueue`` raises and a signal logs
   an ERROR naming the URL.

The refusals are real: another connection of the test holds the locks.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from flask import Flask
from flask_sqlalchemy import SQLAlchemy

from flask_indexnow import signals
from flask_indexnow.retry import is_transient

from ..conftest import RUN_PREFIX, rows, site_table

URL = "https://example.com/note/1"
#: Other rows the blocking transaction changes first, so that InnoDB, which rolls back the
#: "lighter" transaction of a deadlock, chooses the site's.
WEIGHT = 50


def _ext(app: Flask) -> Any:
    return app.extensions["indexnow"].extension


@pytest.fixture
def site(make_app: Any) -> Iterator[tuple[Flask, SQLAlchemy, Any]]:
    db = SQLAlchemy()

    class Note(db.Model):  # type: ignore[name-defined]
        __tablename__ = f"{RUN_PREFIX}host_tx_notes"
        id = sa.Column(sa.Integer, primary_key=True)
        text = sa.Column(sa.String(100), nullable=False)

    app = make_app(db=db)
    _ext(app).watch(Note, url=lambda n: f"https://example.com/note/{n.id}")
    with app.app_context():
        with site_table(db, Note):
            with db.engine.begin() as connection:
                connection.execute(sa.insert(Note.__table__), [{"id": n, "text": "v0"} for n in range(1, WEIGHT + 2)])
            yield app, db, Note


@pytest.mark.parametrize("backend", ["postgresql", "mariadb"])
@pytest.mark.parametrize("warm", [False, True], ids=["first-write", "after-a-write"])
def test_a_deadlock_in_the_extension_write_fails_the_site_commit(site, backend, warm, caplog):
    """``first-write``: on PostgreSQL, the guarded write in a savepoint. ``after-a-write``: once the inbox took a
    write, the bare INSERT of the fast path (``inbox.write_in_transaction``), on MariaDB the only path."""
    app, db, note_model = site
    state = app.extensions["indexnow"]
    inbox = state.models.inbox.name
    notes = note_model.__table__.name
    outcome: dict[str, Any] = {}
    state.inbox.proven = False
    if warm:
        db.session.get(note_model, WEIGHT + 1).text = "warm"
        db.session.commit()
        db.session.remove()
        assert state.inbox.proven or backend != "postgresql"  # the next write takes the fast path

    def edit() -> None:
        with app.app_context():
            note = db.session.get(note_model, 1)
            note.text = "edited"
            try:
                db.session.commit()  # the note's UPDATE, then the inbox INSERT, which waits for the blocker
                outcome["committed"] = True
            except Exception as exc:  # noqa: BLE001 (what the site sees is the assertion)
                outcome["error"] = exc
                db.session.rollback()
            finally:
                db.session.remove()

    with db.engine.connect() as blocker:
        blocker.begin()
        if backend == "postgresql":
            blocker.exec_driver_sql(f"LOCK TABLE {inbox} IN SHARE MODE")
        else:
            blocker.exec_driver_sql(f"UPDATE {notes} SET text = 'heavy' WHERE id > 1")  # the heavier transaction
            blocker.exec_driver_sql(f"SELECT * FROM {inbox} FOR UPDATE")  # REPEATABLE READ: the gap at its end
        with caplog.at_level(logging.WARNING, logger="flask_indexnow"):
            thread = threading.Thread(target=edit)
            thread.start()
            wait_for_a_lock_wait(db, backend, outcome, table=inbox)  # the site's transaction holds the note, waits for the inbox
            try:
                blocker.exec_driver_sql(f"UPDATE {notes} SET text = 'blocker' WHERE id = 1")  # the cycle
            except sa.exc.DBAPIError as exc:
                outcome["blocker"] = exc
            thread.join(30)
        blocker.rollback()
    assert "blocker" not in outcome, outcome  # the database chose the site's transaction
    error = outcome.get("error")
    assert isinstance(error, sa.exc.DBAPIError) and is_transient(error), outcome
    assert not [r for r in caplog.records if "skipped" in r.getMessage()]
    with db.engine.connect() as connection:  # nothing half-done: the commit failed, the edit is not there
        assert connection.execute(sa.select(note_model.__table__.c.text).where(note_model.__table__.c.id == 1)
                                  ).scalar_one() == "v0"
    assert [r.url for r in rows(app)] == ([f"https://example.com/note/{WEIGHT + 1}"] if warm else [])


def wait_for_a_lock_wait(db: SQLAlchemy, backend: str, outcome: dict[str, Any], timeout: float = 5.0,
                         table: str = "") -> None:
    """Until some transaction waits for a lock on ``table`` (PostgreSQL says so; InnoDB lists the lock), or
    ``timeout``. Only ``table``'s: tests running beside this one on the same server wait for locks of their own."""
    if backend == "postgresql":
        query = ("SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
                 f"WHERE NOT l.granted AND c.relname = '{table}'")
    else:
        query = f"SELECT count(*) FROM information_schema.innodb_locks WHERE LOCATE('{table}', lock_table) > 0"
    deadline = time.monotonic() + timeout
    with db.engine.connect() as connection:
        while not outcome and time.monotonic() < deadline and not connection.exec_driver_sql(query).scalar():
            time.sleep(0.05)
            connection.rollback()  # a fresh look


@pytest.fixture
def locked_queue(make_app: Any) -> Iterator[tuple[Flask, Any]]:
    """A PostgreSQL app whose statements give up waiting for a lock after 0.2 s, and a way to hold the queue's."""
    app = make_app(SQLALCHEMY_ENGINE_OPTIONS={"pool_pre_ping": True,
                                              "connect_args": {"options": "-c lock_timeout=200"}})
    queue = app.extensions["indexnow"].models.queue.name
    holders: list[threading.Thread] = []

    def hold(seconds: float) -> None:
        taken = threading.Event()

        def run() -> None:
            with app.app_context(), app.extensions["indexnow"].engine().connect() as connection:
                connection.begin()
                connection.exec_driver_sql(f"LOCK TABLE {queue} IN ACCESS EXCLUSIVE MODE")
                taken.set()
                time.sleep(seconds)
                connection.rollback()

        thread = threading.Thread(target=run)
        thread.start()
        holders.append(thread)
        assert taken.wait(10)

    with app.app_context():
        yield app, hold
    for thread in holders:
        thread.join()


@pytest.mark.parametrize("backend", ["postgresql"])
def test_enqueue_retries_a_lock_timeout_and_succeeds(locked_queue, caplog):
    app, hold = locked_queue
    hold(0.35)
    with caplog.at_level(logging.INFO, logger="flask_indexnow"):
        assert _ext(app).enqueue(URL) == URL
    assert [r.url for r in rows(app)] == [URL]
    assert any("database busy" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("backend", ["postgresql"])
def test_enqueue_raises_once_the_retries_run_out(locked_queue):
    app, hold = locked_queue
    hold(3.0)
    with pytest.raises(sa.exc.OperationalError) as info:
        _ext(app).enqueue(URL)
    assert is_transient(info.value)


@pytest.mark.parametrize("backend", ["postgresql"])
def test_a_signal_logs_an_error_naming_the_url_once_the_retries_run_out(locked_queue, caplog):
    app, hold = locked_queue
    hold(3.0)
    with caplog.at_level(logging.WARNING, logger="flask_indexnow"):
        signals.resource_saved.send(app, url=URL)  # never raises into the sender
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and URL in errors[0].getMessage(), [r.getMessage() for r in caplog.records]


@pytest.mark.parametrize("backend", ["postgresql"])
def test_a_signal_retries_a_lock_timeout_and_queues(locked_queue):
    app, hold = locked_queue
    hold(0.35)
    signals.resource_saved.send(app, url=URL)
    assert [r.url for r in rows(app)] == [URL]
