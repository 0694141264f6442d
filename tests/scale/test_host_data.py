"""Issue 18: the site's own data first, with delivery running beside normal editing.

Four editor threads each change their own pages of a real watched model and
commit; two threads run ``process_queue()`` against a local endpoint the whole
time. At the end the site's rows are read back and the queue drained:

- no commit reported success without its edit (the edit is in the database);
- no event dropped (each page's last delivered action is its last committed state);
- no transient database error reached an editor, and no commit failed because of the extension.

The same for signals sent without ``session=`` and for ``enqueue()``, whose writes own their transaction.
Each run is bounded in time (:data:`SECONDS`) and asserts correctness, never speed.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import pytest
import sqlalchemy as sa
from flask import Flask
from flask_sqlalchemy import SQLAlchemy

from flask_indexnow import signals
from flask_indexnow.retry import is_transient

from ..conftest import RUN_PREFIX, site_table
from .conftest import ext, history_by_url
from .servers import CountingEndpoint

SECONDS = 8.0
#: Edits the editors make at least, however long that takes (a loaded machine is slow).
MIN_EDITS = 100
EDITORS = 4
PASSES = 2
PAGES_PER_EDITOR = 12
#: Pages one commit changes (the rows of one flush).
PAGES_PER_COMMIT = 3
#: Every this many edits a page is unpublished (a ``delete``), then published again.
UNPUBLISH_EVERY = 4
#: Seconds the endpoint takes to answer.
ENDPOINT_DELAY = 0.01
#: Rows of the site's table, and the distance between two edited ones.
SPREAD = 400
ROWS = SPREAD * EDITORS * 12

#: (backend, isolation level of the site's engine; None: the database's default).
DATABASES = [
    pytest.param("mariadb", None, id="mariadb-repeatable-read"),
    pytest.param("postgresql", None, id="postgresql-read-committed"),
    pytest.param("postgresql", "REPEATABLE READ", id="postgresql-repeatable-read"),
    pytest.param("postgresql", "SERIALIZABLE", id="postgresql-serializable"),
]


@dataclass
class Outcome:
    """What the editors saw, and what each page should be at the end."""

    commits: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    transient: int = 0
    #: page id → (title, published, when the last successful commit began)
    expected: dict[int, tuple[str, bool, datetime]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def failed(self, exc: BaseException) -> None:
        with self.lock:
            self.errors[type(exc).__name__ + ": " + str(exc).splitlines()[0][:120]] += 1
            if isinstance(exc, sa.exc.DBAPIError) and is_transient(exc):
                self.transient += 1

    @property
    def failures(self) -> int:
        return sum(self.errors.values())


@contextlib.contextmanager
def site(make_app: Any, endpoint_url: str, isolation: str | None) -> Iterator[tuple[Flask, SQLAlchemy, Any]]:
    """The site: a watched ``Page`` model on an engine with ``isolation`` (None: the database's default)."""
    db = SQLAlchemy()

    class Page(db.Model):  # type: ignore[name-defined]
        __tablename__ = f"{RUN_PREFIX}host_data_pages"
        id = sa.Column(sa.Integer, primary_key=True)
        title = sa.Column(sa.String(100), nullable=False)
        published = sa.Column(sa.Boolean, nullable=False, default=True)

    options: dict[str, Any] = {"pool_pre_ping": True, "pool_size": 10}
    if isolation:
        options["isolation_level"] = isolation
    app = make_app(db=db, INDEXNOW_ENDPOINT=endpoint_url, SQLALCHEMY_ENGINE_OPTIONS=options,
                   INDEXNOW_BASE_URL="https://site.example.com")
    ext(app).watch(Page, url=lambda p: url_of(p.id), published=lambda p: p.published)
    with app.app_context():
        with site_table(db, Page):
            # The site's own transactions must not conflict with each other, so that any failure
            # is the extension's: under SERIALIZABLE, PostgreSQL locks what a transaction read by
            # index page, so the edited pages are spread over many (and the look-ups use the index).
            with db.engine.begin() as connection:
                connection.execute(sa.insert(Page.__table__), [{"title": "v0", "published": True}] * ROWS)
                if db.engine.dialect.name == "postgresql":
                    connection.exec_driver_sql(f"ANALYZE {Page.__table__.name}")
            yield app, db, Page


def pages_of(editor: int) -> list[int]:
    """The ids of the pages ``editor`` changes: its own, far apart from every other editor's."""
    return [1 + SPREAD * (editor * PAGES_PER_EDITOR + k) for k in range(PAGES_PER_EDITOR)]


def backend_of(db: SQLAlchemy) -> str:
    return str(db.engine.dialect.name)


def url_of(page_id: int) -> str:
    return f"https://site.example.com/page/{page_id}"


def run_passes(app: Flask, stop: threading.Event, errors: list[BaseException]) -> None:
    with app.app_context():
        while not stop.is_set():
            try:
                ext(app).process_queue()
            except Exception as exc:  # noqa: BLE001 (the pass's own failures are counted, not the editors')
                errors.append(exc)
            time.sleep(0.005)


def run_in_threads(app: Flask, edit: Callable[[int], None]) -> list[BaseException]:
    """``edit(editor)`` in a loop in each editor thread for :data:`SECONDS`, passes running beside them."""
    stop, pass_errors = threading.Event(), []
    passes = [threading.Thread(target=run_passes, args=(app, stop, pass_errors)) for _ in range(PASSES)]
    deadline, cap = time.monotonic() + SECONDS, time.monotonic() + 4 * SECONDS
    done = Counter[int]()

    def editor(number: int) -> None:
        # SECONDS, or longer on a loaded machine, until MIN_EDITS edits were tried (never past ``cap``).
        with app.app_context():
            while time.monotonic() < cap and (time.monotonic() < deadline or sum(done.values()) < MIN_EDITS):
                edit(number)
                done[number] += 1

    editors = [threading.Thread(target=editor, args=(n,)) for n in range(EDITORS)]
    for thread in passes + editors:
        thread.start()
    for thread in editors:
        thread.join()
    stop.set()
    for thread in passes:
        thread.join()
    return pass_errors


def drain(app: Flask) -> None:
    with app.app_context():
        for _ in range(50):
            result = ext(app).process_queue(limit=1000)
            state = app.extensions["indexnow"]
            if not result.claimed and not any(state.db.session.execute(
                    sa.select(sa.func.count()).select_from(table)).scalar_one() for table in _open_tables(state)):
                return
        raise AssertionError("the queue did not drain")


def _open_tables(state: Any) -> list[Any]:
    """The queue and, where it exists, the inbox: everything that still waits for delivery."""
    return [t for t in (state.models.queue, getattr(state.models, "inbox", None)) if t is not None]


def deliveries(app: Flask) -> dict[str, list[tuple[str, datetime]]]:
    """Each URL's deliveries: (action, when), in the order they were written."""
    return {url: [(h.action, h.created_at) for h in hist] for url, hist in history_by_url(app).items()}


def check(app: Flask, outcome: Outcome, pass_errors: list[BaseException], site_rows: dict[int, tuple[str, bool]]) -> None:
    drain(app)
    lost = {pid: (want[:2], site_rows.get(pid)) for pid, want in outcome.expected.items()
            if site_rows.get(pid) != want[:2]}
    delivered = deliveries(app)
    dropped = {}
    for pid, (_title, published, began) in outcome.expected.items():
        # The last event was sent after its commit began. (A POST of an older event that was already
        # under way may answer later: two passes can hold the URL's old and new row at once.)
        want = "update" if published else "delete"
        if not any(action == want and when >= began for action, when in delivered.get(url_of(pid), [])):
            dropped[pid] = (want, began, delivered.get(url_of(pid), [])[-3:])
    report = (f"{outcome.commits} commits, {outcome.failures} failed {dict(outcome.errors)}, "
              f"{outcome.transient} transient; {len(lost)} lost edits; {len(dropped)} dropped events; "
              f"pass errors: {len(pass_errors)}; first dropped: {list(dropped.items())[:3]}")
    print(f" {report}")  # the figures, with pytest -s -v
    assert outcome.commits >= MIN_EDITS, report
    assert not lost, report
    assert not dropped, report
    assert outcome.transient == 0, report
    assert outcome.failures <= outcome.commits / 1000, report
    assert not pass_errors, report


@pytest.fixture
def slow_endpoint() -> Iterator[CountingEndpoint]:
    """An endpoint that takes a little time to answer: claimed rows stay claimed while editors save."""
    server = CountingEndpoint(delay=ENDPOINT_DELAY).start()
    yield server
    server.stop()


@pytest.mark.slow
@pytest.mark.parametrize(("backend", "isolation"), DATABASES)
def test_watched_saves_beside_running_passes(make_app, slow_endpoint, backend, isolation):
    with site(make_app, slow_endpoint.url, isolation) as (app, db, page_model):
        pages = {n: pages_of(n) for n in range(EDITORS)}
        outcome = Outcome()
        counters = Counter[int]()

        def edit(editor: int) -> None:
            counters[editor] += 1
            n = counters[editor]
            edited = [pages[editor][(n + k) % PAGES_PER_EDITOR] for k in range(PAGES_PER_COMMIT)]
            title, published = f"e{editor}-{n}", n % UNPUBLISH_EVERY != 0
            began = datetime.now(timezone.utc)
            try:
                for pid in edited:
                    page = db.session.get(page_model, pid)
                    page.title, page.published = title, published
                db.session.commit()
            except Exception as exc:  # noqa: BLE001 (counted: the assertion says what failed)
                db.session.rollback()
                outcome.failed(exc)
                return
            finally:
                db.session.remove()
            with outcome.lock:
                outcome.commits += 1
                for pid in edited:
                    outcome.expected[pid] = (title, published, began)

        pass_errors = run_in_threads(app, edit)
        with db.engine.connect() as connection:
            site_rows = {r.id: (r.title, r.published) for r in connection.execute(sa.select(page_model.__table__))}
        check(app, outcome, pass_errors, site_rows)


def _writes_beside_passes(make_app, slow_endpoint, isolation: str | None,
                          write: Callable[[Flask, str, bool], None], caplog: pytest.LogCaptureFixture) -> None:
    """Editors that queue through ``write(app, url, published)`` (a transaction of the extension's own)."""
    with site(make_app, slow_endpoint.url, isolation) as (app, _db, _page):
        outcome = Outcome()
        counters = Counter[int]()

        def edit(editor: int) -> None:
            counters[editor] += 1
            n = counters[editor]
            pid = pages_of(editor)[n % PAGES_PER_EDITOR]
            published = n % UNPUBLISH_EVERY != 0
            began = datetime.now(timezone.utc)
            try:
                write(app, url_of(pid), published)
            except Exception as exc:  # noqa: BLE001
                outcome.failed(exc)
                return
            with outcome.lock:
                outcome.commits += 1
                outcome.expected[pid] = ("", published, began)

        with caplog.at_level(logging.WARNING, logger="flask_indexnow"):
            pass_errors = run_in_threads(app, edit)
        skipped = [r.getMessage() for r in caplog.records if "skipped" in r.getMessage()
                   or "could not be written" in r.getMessage()]
        assert not skipped, skipped[:5]
        check(app, outcome, pass_errors, {pid: ("", want[1]) for pid, want in outcome.expected.items()})


@pytest.mark.slow
@pytest.mark.parametrize(("backend", "isolation"), [DATABASES[0], DATABASES[2]])
def test_signals_without_session_beside_running_passes(make_app, slow_endpoint, backend, isolation, caplog):
    def write(app: Flask, url: str, published: bool) -> None:
        signals.resource_saved.send(app, url=url, published=published)

    _writes_beside_passes(make_app, slow_endpoint, isolation, write, caplog)


@pytest.mark.slow
@pytest.mark.parametrize(("backend", "isolation"), [DATABASES[0], DATABASES[2]])
def test_enqueue_beside_running_passes(make_app, slow_endpoint, backend, isolation, caplog):
    def write(app: Flask, url: str, published: bool) -> None:
        ext(app).enqueue(url, "update" if published else "delete")

    _writes_beside_passes(make_app, slow_endpoint, isolation, write, caplog)
