"""Queue rows of a signal sent without ``session=``: a transaction of their own.

A signal sent without ``session=`` is not part of the host's unit of work, so
its rows are written and committed on a connection of their own: the host's
``db.session`` is never flushed, committed or rolled back by the extension,
and a failing queue write leaves the host's pending work as it was.

SQLite allows one writer at a time. When the host's session already holds a
write transaction on the same SQLite database (it flushed changes and has not
committed yet), a second connection would wait for that lock until its busy
timeout and fail, since the lock is held by the very thread that waits. So in
that one case the rows wait in ``session.info`` and are written, still in a
transaction of their own, as soon as the host's transaction ends (commit,
rollback or close): the event neither joins the host's transaction nor is lost
with it.

The write is the worker's kind of short transaction (:func:`flask_indexnow.claims.run`):
run again after a transient refusal (deadlock, lock timeout, serialization
failure, "database is locked"). When the database still refuses it, an ERROR
names the URLs that were not queued (issue 18). Missing tables and other
failures are raised to the receiver, which logs them.
"""

from __future__ import annotations

import logging
from typing import Any

import sqlalchemy as sa
from flask import has_app_context
from sqlalchemy import event
from sqlalchemy.orm import Session, SessionTransaction

from .. import claims
from ..missing import is_missing_table
from ..queue import Entry, after_write, write_entries
from ..retry import DB_ATTEMPTS, is_transient
from ..sqlutil import error_text
from ..state import IndexNowState, current_app_object
from . import skipped

logger = logging.getLogger(__name__)

_DEFERRED_KEY = "indexnow_deferred_entries"
_installed = False


def write(state: IndexNowState, entries: list[Entry]) -> None:
    """Write ``entries`` in a transaction of their own (see the module's docstring)."""
    session = _sqlite_writer(state)
    if session is not None:
        app = current_app_object()
        session.info.setdefault(_DEFERRED_KEY, []).append((app, state, entries))
        logger.debug("IndexNow: SQLite is locked by this session's open transaction: "
                      "%d row(s) will be written when it ends", len(entries))
        return
    _write_now(state, entries)


def _write_now(state: IndexNowState, entries: list[Entry]) -> None:
    try:
        written = claims.run(state.engine(), lambda connection: write_entries(state, connection, entries))
    except sa.exc.DBAPIError as exc:
        if is_missing_table(exc) or not is_transient(exc):
            raise
        logger.error("IndexNow: %d URL(s) not queued: the database refused the write %d times (%s): %s",
                     len(entries), DB_ATTEMPTS, error_text(exc), ", ".join(e.url for e in entries[:5]))
        skipped.record(state, len(entries))
        return
    after_write(state, written, None)


def _sqlite_writer(state: IndexNowState) -> Session | None:
    """The host's session when it holds SQLite's write lock on our database, else None."""
    engine = state.engine()
    if engine.dialect.name != "sqlite":
        return None
    scoped = state.db.session
    registry = getattr(scoped, "registry", None)
    if registry is not None and not registry.has():
        return None  # no session in this scope yet: nothing can hold a lock
    session: Session = scoped() if callable(scoped) else scoped
    if not session.in_transaction():
        return None
    bind: Any = session.get_bind(mapper=state.models.Queue)
    if getattr(bind, "url", None) != engine.url:
        return None
    dbapi = session.connection(bind_arguments={"mapper": state.models.Queue}).connection.dbapi_connection
    return session if getattr(dbapi, "in_transaction", False) else None


def _transaction_end(session: Session, transaction: SessionTransaction) -> None:
    if transaction.parent is not None or _DEFERRED_KEY not in session.info:
        return
    for app, state, entries in session.info.pop(_DEFERRED_KEY):
        try:
            if has_app_context() and current_app_object() is app:
                _write_now(state, entries)
            else:
                with app.app_context():
                    _write_now(state, entries)
        except Exception as exc:
            logger.error("IndexNow: %d URL(s) not queued (%s): %s", len(entries), error_text(exc),
                         ", ".join(e.url for e in entries[:5]), exc_info=not isinstance(exc, sa.exc.DBAPIError))
            skipped.record(state, len(entries))


def install() -> None:
    """Listen for the end of every Session's transaction once per process (idempotent)."""
    global _installed
    if not _installed:
        event.listen(Session, "after_transaction_end", _transaction_end)
        _installed = True
