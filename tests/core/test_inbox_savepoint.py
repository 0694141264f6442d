"""The savepoint around the inbox write in the site's transaction: spent only where it buys something.

A guarded write costs PostgreSQL and MariaDB two more round trips per save
(figures 13 and 15), and SQLite about a quarter of what a watched save pays to
queue. MariaDB and SQLite roll back a failed statement alone, so they never
need one; PostgreSQL needs one until the inbox has taken a write (a missing
table must not poison the site's transaction). And
whatever the path, a failure of a bare write that ended the transaction fails
the site's commit, never a silent one, and the next write is guarded again.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import sqlalchemy as sa
from flask import Flask
from flask_sqlalchemy import SQLAlchemy

from ..conftest import RUN_PREFIX, AppFactory, site_table

pytestmark = pytest.mark.every_backend


@pytest.fixture
def site(make_app: AppFactory) -> Iterator[tuple[Flask, SQLAlchemy, Any]]:
    db = SQLAlchemy()

    class Page(db.Model):  # type: ignore[name-defined]
        __tablename__ = f"{RUN_PREFIX}savepoint_pages"
        id = sa.Column(sa.Integer, primary_key=True)
        slug = sa.Column(sa.String(50), nullable=False)

    # A prefix of this test's own: renaming its inbox away touches no other test's tables.
    app = make_app(db=db, INDEXNOW_TABLE_PREFIX=f"{RUN_PREFIX}sp{uuid.uuid4().hex[:4]}_")
    app.extensions["indexnow"].extension.watch(Page, url=lambda p: f"https://example.com/{p.slug}")
    with app.app_context(), site_table(db, Page):
        yield app, db, Page


def save(db: SQLAlchemy, model: Any, slug: str) -> list[str]:
    """Add one page and commit; the statements the commit sent."""
    sent: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        sent.append(statement)

    db.session.add(model(slug=slug))
    sa.event.listen(db.engine, "before_cursor_execute", record)
    try:
        db.session.commit()
    finally:
        sa.event.remove(db.engine, "before_cursor_execute", record)
    return sent


def savepoints(statements: list[str]) -> list[str]:
    return [s for s in statements if s.lstrip().upper().startswith(("SAVEPOINT", "RELEASE SAVEPOINT"))]


def inbox_urls(app: Flask, db: SQLAlchemy) -> list[str]:
    inbox = app.extensions["indexnow"].models.inbox
    with db.engine.connect() as connection:
        return list(connection.scalars(sa.select(inbox.c.url).order_by(inbox.c.id)))


@contextmanager
def inbox_renamed_away(app: Flask, db: SQLAlchemy) -> Iterator[None]:
    """The inbox table gone from under a running site (and back afterwards)."""
    name = app.extensions["indexnow"].models.inbox.name
    quote: Callable[[str], str] = db.engine.dialect.identifier_preparer.quote
    with db.engine.begin() as connection:
        connection.exec_driver_sql(f"ALTER TABLE {quote(name)} RENAME TO {quote(name + '_away')}")
    try:
        yield
    finally:
        db.session.rollback()
        with db.engine.begin() as connection:
            connection.exec_driver_sql(f"ALTER TABLE {quote(name + '_away')} RENAME TO {quote(name)}")


def test_a_savepoint_only_where_it_buys_something(site, backend) -> None:
    app, db, page = site
    first, second = save(db, page, "first"), save(db, page, "second")
    expected = {"sqlite": (False, False), "postgresql": (True, False), "mariadb": (False, False)}[backend]
    assert (bool(savepoints(first)), bool(savepoints(second))) == expected, (first, second)
    assert inbox_urls(app, db) == ["https://example.com/first", "https://example.com/second"]


def test_an_inbox_gone_after_the_first_write(site, backend, caplog) -> None:
    """PostgreSQL: the bare write's failure is the site's (its commit fails, nothing half-written), then guarded again.

    MariaDB and SQLite keep the site's transaction alive: the event is logged
    as skipped and the page is saved, as before the inbox was proven.
    """
    app, db, page = site
    save(db, page, "proven")
    with inbox_renamed_away(app, db):
        with caplog.at_level(logging.ERROR, logger="flask_indexnow"):
            if backend == "postgresql":
                with pytest.raises(sa.exc.ProgrammingError, match="does not exist"):
                    save(db, page, "lost-with-its-transaction")
                db.session.rollback()
                assert caplog.records == []  # raised to the site, not logged as skipped
                guarded_again = save(db, page, "kept")
                assert savepoints(guarded_again), guarded_again
            else:
                save(db, page, "kept")
        assert [r.getMessage() for r in caplog.records if "event skipped" in r.getMessage()] != []
        assert "tables are missing" in caplog.text
    slugs = db.session.scalars(sa.select(page.slug).order_by(page.id)).all()
    assert slugs == ["proven", "kept"]  # the failed commit wrote nothing of its own either
    assert inbox_urls(app, db) == ["https://example.com/proven"]
    save(db, page, "back")
    assert inbox_urls(app, db) == ["https://example.com/proven", "https://example.com/back"]


@pytest.mark.parametrize("backend", ["sqlite"])  # a SQLite-only failure mode (RAISE(ROLLBACK) in a trigger)
def test_sqlite_rolling_the_whole_transaction_back_fails_the_commit(site, backend, caplog) -> None:
    """SQLite: the bare INSERT's failure that took the site's transaction with it is the site's error.

    SQLite undoes a failed statement alone, except after some errors (a full
    disk, an I/O error) where it rolls the whole transaction back. A trigger
    that raises ROLLBACK does the same on demand: the page's own INSERT is
    gone with it, so the commit must fail, not report success without the page.
    """
    app, db, page = site
    inbox = app.extensions["indexnow"].models.inbox.name
    quote: Callable[[str], str] = db.engine.dialect.identifier_preparer.quote
    trigger = quote(f"{inbox}_refuse")
    with db.engine.begin() as connection:
        connection.exec_driver_sql(f"CREATE TRIGGER {trigger} BEFORE INSERT ON {quote(inbox)} "
                                   "BEGIN SELECT RAISE(ROLLBACK, 'rolled back'); END")
    try:
        with caplog.at_level(logging.WARNING, logger="flask_indexnow"):
            with pytest.raises(sa.exc.DBAPIError, match="rolled back"):
                save(db, page, "lost-with-its-transaction")
        db.session.rollback()
        assert not [r for r in caplog.records if "skipped" in r.getMessage()]  # raised, not logged away
    finally:
        with db.engine.begin() as connection:
            connection.exec_driver_sql(f"DROP TRIGGER {trigger}")
    assert db.session.scalars(sa.select(page.slug)).all() == []
    assert inbox_urls(app, db) == []
    save(db, page, "after")
    assert inbox_urls(app, db) == ["https://example.com/after"]


class _DriverThatCannotTell:
    """A sqlite3 connection seen through a driver without ``in_transaction``."""

    def __init__(self, connection: Any) -> None:
        self._connection = connection

    def __getattr__(self, name: str) -> Any:
        if name == "in_transaction":
            raise AttributeError(name)
        return getattr(self._connection, name)


@pytest.mark.parametrize("backend", ["sqlite"])
def test_a_sqlite_driver_that_cannot_tell_its_transaction_gets_the_savepoint(make_app, backend, tmp_path) -> None:
    import sqlite3

    path = tmp_path / "cannot-tell.db"
    db = SQLAlchemy()

    class Page(db.Model):  # type: ignore[name-defined]
        __tablename__ = f"{RUN_PREFIX}cannot_tell_pages"
        id = sa.Column(sa.Integer, primary_key=True)
        slug = sa.Column(sa.String(50), nullable=False)

    app = make_app(db=db, SQLALCHEMY_DATABASE_URI=f"sqlite:///{path}",
                   SQLALCHEMY_ENGINE_OPTIONS={"creator": lambda: _DriverThatCannotTell(sqlite3.connect(path))})
    app.extensions["indexnow"].extension.watch(Page, url=lambda p: f"https://example.com/{p.slug}")
    with app.app_context(), site_table(db, Page):
        assert savepoints(save(db, Page, "guarded")), "no way to see a rollback: the write keeps its savepoint"
        assert inbox_urls(app, db) == ["https://example.com/guarded"]
