"""Issue 18, item 3: every web-side write that owns its transaction retries a transient refusal, on each database.

``enqueue()`` (one upsert in autocommit, or a short transaction through
``claims.run`` when the resubmit interval needs the ledger), ``enqueue_many()``,
the sitemap submit and signals sent without ``session=`` all meet a real lock
held by another connection: a PostgreSQL ``lock_timeout``, a MariaDB
``innodb_lock_wait_timeout`` (set per session for the app under test), SQLite's
"database is locked" (another connection in ``BEGIN IMMEDIATE``). Released
soon, the write succeeds after retrying; never released, ``enqueue`` raises
the transient error and a signal logs an ERROR naming the URL.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from flask import Flask

from flask_indexnow import signals
from flask_indexnow.retry import is_transient
from flask_indexnow.sitemap import submit_sitemap
from flask_indexnow.state import get_state

from ..conftest import rows
from ..sitemap.helpers import urlset

URL = "https://example.com/note/1"
OTHER = "https://example.com/note/2"

#: How long each database makes a statement wait for a lock before refusing it: short, so that the
#: tests are quick, and a hold of :data:`SHORT_HOLD` outlasts the first try but not the retries.
LOCK_WAIT = {"postgresql": 0.2, "mariadb": 1.0, "sqlite": 0.2}
SHORT_HOLD = {"postgresql": 0.35, "mariadb": 1.5, "sqlite": 0.35}
BACKENDS = ["sqlite", "postgresql", "mariadb"]


def _ext(app: Flask) -> Any:
    return app.extensions["indexnow"].extension


def _engine_options(backend: str) -> dict[str, Any]:
    """The app's own engine waits :data:`LOCK_WAIT` for a lock: a session setting, never a global one."""
    wait = LOCK_WAIT[backend]
    if backend == "postgresql":
        connect_args: dict[str, Any] = {"options": f"-c lock_timeout={int(wait * 1000)}"}
    elif backend == "mariadb":
        connect_args = {"init_command": f"SET SESSION innodb_lock_wait_timeout={int(wait)}"}
    else:
        connect_args = {"timeout": wait}  # SQLite's busy timeout
    return {"pool_pre_ping": True, "connect_args": connect_args}


Hold = Callable[[float | None], None]


def _lock_queue(app: Flask, backend: str, taken: threading.Event, release: threading.Event) -> None:
    """Lock ``app``'s queue from another connection until ``release`` is set: no write of the app's goes in."""
    state = app.extensions["indexnow"]
    queue = state.models.queue.name
    with app.app_context():
        url = state.engine().url
    if backend == "sqlite":
        raw = sqlite3.connect(url.database, isolation_level=None)
        raw.execute("BEGIN IMMEDIATE")  # the database's one write lock
        taken.set()
        release.wait(60)
        raw.execute("ROLLBACK")
        raw.close()
        return
    engine = sa.create_engine(url)  # the database's default session settings
    try:
        with engine.connect() as connection:
            connection.begin()
            if backend == "postgresql":
                connection.exec_driver_sql(f'LOCK TABLE "{queue}" IN ACCESS EXCLUSIVE MODE')
            else:  # REPEATABLE READ: every row and the gap at the table's end, so no insert goes in
                connection.exec_driver_sql(f"SELECT * FROM `{queue}` FOR UPDATE")
            taken.set()
            release.wait(60)
            connection.rollback()
    finally:
        engine.dispose()


@pytest.fixture
def locker(backend: str) -> Iterator[Callable[[Flask, float | None], None]]:
    """``lock(app, seconds)``: another connection locks the queue for that long (None: until the test ends)."""
    threads: list[tuple[threading.Thread, threading.Event]] = []

    def lock(app: Flask, seconds: float | None) -> None:
        taken, release = threading.Event(), threading.Event()
        thread = threading.Thread(target=_lock_queue, args=(app, backend, taken, release))
        thread.start()
        threads.append((thread, release))
        assert taken.wait(10)
        if seconds is not None:
            threading.Timer(seconds, release.set).start()

    yield lock
    for thread, release in threads:
        release.set()
        thread.join(30)


@pytest.fixture
def held(make_app: Any, backend: str, locker: Any) -> Iterator[tuple[Flask, Hold]]:
    """An app on ``backend`` whose statements wait :data:`LOCK_WAIT` for a lock, and ``hold(seconds)``."""
    app = make_app(SQLALCHEMY_ENGINE_OPTIONS=_engine_options(backend))
    with app.app_context():
        yield app, lambda seconds: locker(app, seconds)


def _busy(caplog: pytest.LogCaptureFixture) -> bool:
    return any("database busy" in r.getMessage() for r in caplog.records)


def _queued(app: Flask) -> list[tuple[str, str]]:
    return sorted((r.url, r.action) for r in rows(app))


WRITES: dict[str, Callable[[Flask], Any]] = {
    "enqueue": lambda app: _ext(app).enqueue(URL),
    "enqueue_many": lambda app: _ext(app).enqueue_many([URL, OTHER]),
    "signal": lambda app: signals.resource_saved.send(app, url=URL, related=[OTHER]),
}
EXPECTED = {"enqueue": [URL], "enqueue_many": [URL, OTHER], "signal": [URL, OTHER]}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("write", list(WRITES))
def test_a_write_of_its_own_retries_a_lock_and_succeeds(held, backend, write, caplog):
    app, hold = held
    hold(SHORT_HOLD[backend])
    with caplog.at_level(logging.INFO, logger="flask_indexnow"):
        WRITES[write](app)
    assert _queued(app) == [(u, "update") for u in EXPECTED[write]]
    assert _busy(caplog), [r.getMessage() for r in caplog.records]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_resubmit_interval_path_retries_a_lock_and_succeeds(make_app, backend, locker, caplog):
    """With INDEXNOW_RESUBMIT_INTERVAL the write reads the ledger: a short transaction through ``claims.run``."""
    app = make_app(SQLALCHEMY_ENGINE_OPTIONS=_engine_options(backend), INDEXNOW_RESUBMIT_INTERVAL=3600)
    with app.app_context():
        locker(app, SHORT_HOLD[backend])
        with caplog.at_level(logging.INFO, logger="flask_indexnow"):
            assert _ext(app).enqueue(URL) == URL
    assert _queued(app) == [(URL, "update")]
    assert _busy(caplog)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_sitemap_submit_retries_a_lock_and_queues_everything(held, backend, tmp_path, caplog):
    app, hold = held
    path = tmp_path / "sitemap.xml"
    path.write_bytes(urlset(URL, OTHER))
    hold(SHORT_HOLD[backend])
    with caplog.at_level(logging.INFO, logger="flask_indexnow"):
        result = submit_sitemap(get_state(), path)
    assert (result.found, result.queued) == (2, 2)
    assert _queued(app) == [(URL, "update"), (OTHER, "update")]
    assert _busy(caplog)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("write", ["enqueue", "enqueue_many"])
def test_enqueue_raises_the_refusal_once_the_retries_run_out(held, backend, write, caplog):
    app, hold = held
    hold(None)
    with caplog.at_level(logging.INFO, logger="flask_indexnow"), pytest.raises(sa.exc.OperationalError) as info:
        WRITES[write](app)
    assert is_transient(info.value)
    assert _busy(caplog)  # tried again before giving up


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_signal_logs_an_error_naming_its_urls_once_the_retries_run_out(held, backend, caplog):
    app, hold = held
    hold(None)
    with caplog.at_level(logging.WARNING, logger="flask_indexnow"):
        signals.resource_saved.send(app, url=URL, related=[OTHER])  # never raises into the sender
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and URL in errors[0] and OTHER in errors[0], [r.getMessage() for r in caplog.records]


@pytest.mark.parametrize("backend", ["postgresql"])
def test_a_signal_whose_write_fails_for_good_logs_an_error_naming_its_urls(make_app, caplog):
    """A refusal that is not transient (here a CHECK the queue's rows cannot pass) is not retried; the
    ERROR names the URLs of a ``url=``-only signal, since no resource does."""
    app = make_app()
    queue = app.extensions["indexnow"].models.queue.name
    with app.app_context():
        engine = app.extensions["indexnow"].engine()
        with engine.begin() as connection:
            connection.exec_driver_sql(f'ALTER TABLE "{queue}" ADD CONSTRAINT refuse_all CHECK (false) NOT VALID')
        try:
            with caplog.at_level(logging.INFO, logger="flask_indexnow"):
                signals.resource_saved.send(app, url=URL, related=[OTHER])
        finally:
            with engine.begin() as connection:
                connection.exec_driver_sql(f'ALTER TABLE "{queue}" DROP CONSTRAINT refuse_all')
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and URL in errors[0] and OTHER in errors[0], errors
    assert not _busy(caplog)  # a CHECK violation is not tried again
    assert rows(app) == []
