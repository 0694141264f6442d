"""Issue 18: the site's own data first, with delivery running beside normal editing.

Four editor threads each change their own pages of a real watched model and
commit; two threads run ``process_queue()`` against a local endpoint the whole
time. At the end the site's rows are read back and the queue drained:

- no commit reported success without its edit: each page holds its last committed
  title, and every successful commit's revision rows are in the database (and
  no failed commit's);
- no event dropped, counted exactly: each commit also adds a row of a second
  watched model, ``Revision``, whose URL names the revision, so every
  successful commit has URLs of its own that must each be delivered after the
  commit began (a dropped event cannot hide behind an earlier one of the same
  page, as it could when only each page's last action was compared); the
  inbox rows that committed transactions wrote, counted from the site's side,
  are exactly two per edited page (page and revision); and each page's last
  state (update or delete) was delivered after its last commit began;
- no transient database error reached an editor, no commit failed because of
  the extension, and the extension logged no ERROR and no skipped event.

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
from sqlalchemy import event

from flask_indexnow import signals
from flask_indexnow.retry import is_transient

from ..conftest import RUN_PREFIX, site_table
from .conftest import ext, history_by_url
from .servers import CountingEndpoint

SECONDS = 10.0
#: Edits the editors make at least, however long that takes (a loaded machine is slow).
MIN_EDITS = 120
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
    #: URL of each successful commit's own revision → when that commit began.
    revisions: dict[str, datetime] = field(default_factory=dict)
    #: URLs of the revisions of commits that failed: nothing of them may be stored or sent.
    failed_revisions: set[str] = field(default_factory=set)
    #: Inbox rows written by transactions that committed (None: not counted, the write has its own transaction).
    inbox_rows: int | None = None
    #: Inbox rows those commits should have written.
    inbox_expected: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def failed(self, exc: BaseException) -> None:
        with self.lock:
            self.errors[type(exc).__name__ + ": " + str(exc).splitlines()[0][:120]] += 1
            if isinstance(exc, sa.exc.DBAPIError) and is_transient(exc):
                self.transient += 1

    @property
    def failures(self) -> int:
        return sum(self.errors.values())


class InboxRows:
    """Inbox rows the database reports inserted, per editor thread, until the editor takes the count.

    A listener on the site's engine reads ``cursor.rowcount`` of every INSERT
    into the inbox; the editor adds what its thread wrote to the total only once
    its commit returned (a failed commit's rows are rolled back and not
    counted). The passes run in threads of their own and never insert there.
    """

    def __init__(self, engine: sa.Engine, table: sa.Table) -> None:
        self.engine = engine
        self.names = {table.name, engine.dialect.identifier_preparer.format_table(table)}
        self.local = threading.local()

    def _seen(self, conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        start = statement[:200]
        if start.startswith("INSERT INTO ") and any(f"INTO {name} " in start for name in self.names):
            self.local.rows = getattr(self.local, "rows", 0) + cursor.rowcount

    def take(self) -> int:
        """The rows this thread inserted since the last call."""
        rows, self.local.rows = getattr(self.local, "rows", 0), 0
        return int(rows)

    def __enter__(self) -> InboxRows:
        event.listen(self.engine, "after_cursor_execute", self._seen)
        return self

    def __exit__(self, *exc: object) -> None:
        event.remove(self.engine, "after_cursor_execute", self._seen)


@dataclass
class Site:
    app: Flask
    db: SQLAlchemy
    page: Any
    revision: Any


@contextlib.contextmanager
def site(make_app: Any, endpoint_url: str, isolation: str | None) -> Iterator[Site]:
    """The site: watched ``Page`` and ``Revision`` models on an engine with ``isolation`` (None: the default).

    A revision is the site's own insert-only record of each edit, with a URL of
    its own: what makes every commit's events distinct from every other's.
    """
    db = SQLAlchemy()

    class Page(db.Model):  # type: ignore[name-defined]
        __tablename__ = f"{RUN_PREFIX}host_data_pages"
        id = sa.Column(sa.Integer, primary_key=True)
        title = sa.Column(sa.String(100), nullable=False)
        published = sa.Column(sa.Boolean, nullable=False, default=True)

    class Revision(db.Model):  # type: ignore[name-defined]
        __tablename__ = f"{RUN_PREFIX}host_data_revisions"
        id = sa.Column(sa.Integer, primary_key=True)
        page_id = sa.Column(sa.Integer, nullable=False)
        title = sa.Column(sa.String(100), nullable=False)

    options: dict[str, Any] = {"pool_pre_ping": True, "pool_size": 10}
    if isolation:
        options["isolation_level"] = isolation
    app = make_app(db=db, INDEXNOW_ENDPOINT=endpoint_url, SQLALCHEMY_ENGINE_OPTIONS=options,
                   INDEXNOW_BASE_URL="https://site.example.com")
    ext(app).watch(Page, url=lambda p: url_of(p.id), published=lambda p: p.published)
    ext(app).watch(Revision, url=lambda r: revision_url(r.page_id, r.title))
    with app.app_context():
        with site_table(db, Page), site_table(db, Revision):
            # The site's own transactions must not conflict with each other, so that any failure
            # is the extension's: under SERIALIZABLE, PostgreSQL locks what a transaction read by
            # index page, so the edited pages are spread over many (and the look-ups use the index).
            with db.engine.begin() as connection:
                connection.execute(sa.insert(Page.__table__), [{"title": "v0", "published": True}] * ROWS)
                if db.engine.dialect.name == "postgresql":
                    connection.exec_driver_sql(f"ANALYZE {Page.__table__.name}")
            yield Site(app, db, Page, Revision)


def pages_of(editor: int) -> list[int]:
    """The ids of the pages ``editor`` changes: its own, far apart from every other editor's."""
    return [1 + SPREAD * (editor * PAGES_PER_EDITOR + k) for k in range(PAGES_PER_EDITOR)]


def backend_of(db: SQLAlchemy) -> str:
    return str(db.engine.dialect.name)


def url_of(page_id: int) -> str:
    return f"https://site.example.com/page/{page_id}"


def revision_url(page_id: int, title: str) -> str:
    """The URL of one revision of a page: no other commit's event ever names it."""
    return f"https://site.example.com/page/{page_id}/rev/{title}"


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


def extension_complaints(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The extension's ERROR lines and skipped events: each one an event the site may have lost."""
    return [r.getMessage() for r in caplog.records if r.name.startswith("flask_indexnow") and (
        r.levelno >= logging.ERROR or "skipped" in r.getMessage() or "could not be written" in r.getMessage())]


def check(app: Flask, outcome: Outcome, pass_errors: list[BaseException], site_rows: dict[int, tuple[str, bool]],
          stored_revisions: set[str] | None = None) -> None:
    """Drain the queue, then compare what the editors were told with the site's rows and what was delivered.

    ``stored_revisions``: the revision URLs the site's own revision table holds
    (None: the writes have no site rows of their own).
    """
    drain(app)
    lost = {pid: (want[:2], site_rows.get(pid)) for pid, want in outcome.expected.items()
            if site_rows.get(pid) != want[:2]}
    if stored_revisions is not None:
        lost_revisions = set(outcome.revisions) - stored_revisions
        half_written = stored_revisions & outcome.failed_revisions
    else:
        lost_revisions, half_written = set(), set()
    delivered = deliveries(app)
    dropped = {}
    for pid, (_title, published, began) in outcome.expected.items():
        # The last event was sent after its commit began. (A POST of an older event that was already
        # under way may answer later: two passes can hold the URL's old and new row at once.)
        want = "update" if published else "delete"
        if not any(action == want and when >= began for action, when in delivered.get(url_of(pid), [])):
            dropped[pid] = (want, began, delivered.get(url_of(pid), [])[-3:])
    # Exact: every successful commit's own revision URL, delivered after that commit began.
    dropped_revisions = {url: (began, delivered.get(url)) for url, began in outcome.revisions.items()
                         if not any(action == "update" and when >= began for action, when in delivered.get(url, []))}
    sent_for_failed = outcome.failed_revisions & set(delivered) if stored_revisions is not None else set()
    report = (f"{outcome.commits} commits, {outcome.failures} failed {dict(outcome.errors)}, "
              f"{outcome.transient} transient; {len(lost)} lost edits, {len(lost_revisions)} lost revisions, "
              f"{len(half_written)} failed commits stored; inbox rows {outcome.inbox_rows} of "
              f"{outcome.inbox_expected}; {len(dropped)} dropped page events, {len(dropped_revisions)} of "
              f"{len(outcome.revisions)} revision events dropped, {len(sent_for_failed)} sent for failed commits; "
              f"pass errors: {len(pass_errors)}; first dropped: {list(dropped.items())[:2]} "
              f"{list(dropped_revisions.items())[:2]}")
    print(f" {report}")  # the figures, with pytest -s -v
    assert outcome.commits >= MIN_EDITS, report
    assert not lost and not lost_revisions and not half_written, report
    if outcome.inbox_rows is not None:
        assert outcome.inbox_rows == outcome.inbox_expected, report
    assert not dropped_revisions, report
    assert not dropped, report
    assert not sent_for_failed, report
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
def test_watched_saves_beside_running_passes(make_app, slow_endpoint, backend, isolation, caplog):
    with site(make_app, slow_endpoint.url, isolation) as s:
        db = s.db
        pages = {n: pages_of(n) for n in range(EDITORS)}
        outcome = Outcome(inbox_rows=0)
        counters = Counter[int]()
        inbox_rows = InboxRows(db.engine, s.app.extensions["indexnow"].models.inbox)

        def edit(editor: int) -> None:
            counters[editor] += 1
            n = counters[editor]
            edited = [pages[editor][(n + k) % PAGES_PER_EDITOR] for k in range(PAGES_PER_COMMIT)]
            title, published = f"e{editor}-{n}", n % UNPUBLISH_EVERY != 0
            revisions = [revision_url(pid, title) for pid in edited]
            inbox_rows.take()  # nothing of an earlier try counts
            began = datetime.now(timezone.utc)
            try:
                for pid in edited:
                    page = db.session.get(s.page, pid)
                    page.title, page.published = title, published
                    db.session.add(s.revision(page_id=pid, title=title))
                db.session.commit()
            except Exception as exc:  # noqa: BLE001 (counted: the assertion says what failed)
                db.session.rollback()
                outcome.failed(exc)
                with outcome.lock:
                    outcome.failed_revisions.update(revisions)
                return
            finally:
                db.session.remove()
            written = inbox_rows.take()
            with outcome.lock:
                outcome.commits += 1
                # One event per edited page (an update, or a delete when unpublished) and one per revision.
                outcome.inbox_expected += 2 * len(edited)
                outcome.inbox_rows = (outcome.inbox_rows or 0) + written
                for pid, url in zip(edited, revisions):
                    outcome.expected[pid] = (title, published, began)
                    outcome.revisions[url] = began

        with inbox_rows, caplog.at_level(logging.WARNING, logger="flask_indexnow"):
            pass_errors = run_in_threads(s.app, edit)
        complaints = extension_complaints(caplog)
        with db.engine.connect() as connection:
            site_rows = {r.id: (r.title, r.published) for r in connection.execute(sa.select(s.page.__table__))}
            stored = {revision_url(r.page_id, r.title) for r in connection.execute(sa.select(s.revision.__table__))}
        check(s.app, outcome, pass_errors, site_rows, stored)
        assert not complaints, complaints[:5]


def _writes_beside_passes(make_app, slow_endpoint, isolation: str | None,
                          write: Callable[[Flask, str, bool, str], None], caplog: pytest.LogCaptureFixture) -> None:
    """Editors that queue through ``write(app, url, published, revision_url)`` (a transaction of the
    extension's own); the revision's URL is queued with the page's, so that every write is told apart."""
    with site(make_app, slow_endpoint.url, isolation) as s:
        app = s.app
        outcome = Outcome()
        counters = Counter[int]()

        def edit(editor: int) -> None:
            counters[editor] += 1
            n = counters[editor]
            pid = pages_of(editor)[n % PAGES_PER_EDITOR]
            published = n % UNPUBLISH_EVERY != 0
            revision = revision_url(pid, f"e{editor}-{n}")
            began = datetime.now(timezone.utc)
            try:
                write(app, url_of(pid), published, revision)
            except Exception as exc:  # noqa: BLE001
                outcome.failed(exc)
                return
            with outcome.lock:
                outcome.commits += 1
                outcome.expected[pid] = ("", published, began)
                outcome.revisions[revision] = began

        with caplog.at_level(logging.WARNING, logger="flask_indexnow"):
            pass_errors = run_in_threads(app, edit)
        complaints = extension_complaints(caplog)
        assert not complaints, complaints[:5]
        check(app, outcome, pass_errors, {pid: ("", want[1]) for pid, want in outcome.expected.items()})


@pytest.mark.slow
@pytest.mark.parametrize(("backend", "isolation"), [DATABASES[0], DATABASES[2]])
def test_signals_without_session_beside_running_passes(make_app, slow_endpoint, backend, isolation, caplog):
    def write(app: Flask, url: str, published: bool, revision: str) -> None:
        signals.resource_saved.send(app, url=url, published=published, related=[revision])

    _writes_beside_passes(make_app, slow_endpoint, isolation, write, caplog)


@pytest.mark.slow
@pytest.mark.parametrize(("backend", "isolation"), [DATABASES[0], DATABASES[2]])
def test_enqueue_beside_running_passes(make_app, slow_endpoint, backend, isolation, caplog):
    def write(app: Flask, url: str, published: bool, revision: str) -> None:
        ext(app).enqueue(url, "update" if published else "delete")
        ext(app).enqueue(revision)

    _writes_beside_passes(make_app, slow_endpoint, isolation, write, caplog)
