"""Issue 18 under real processes: gunicorn (3 sync workers) saving pages while 2 ``flask indexnow work`` deliver.

Client threads edit their own pages of a watched model through HTTP for
:data:`SECONDS`; each request is a site's own save (the row and its event in
one transaction) followed by the response's tick. Two worker processes run
passes the whole time. No request may answer 500, and every accepted change
must be in the database and delivered after it was made: each save also adds a
row of the site's watched ``Revision`` model, whose URL names the revision, so
every accepted request has an event of its own, and each one must have been
delivered (not only each page's last action, which an earlier event of the same
action could stand in for). Run on MariaDB and on PostgreSQL at each isolation
level a site may set through ``SQLALCHEMY_ENGINE_OPTIONS``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import datetime, timezone

import pytest
import requests
import sqlalchemy as sa

from ..conftest import RUN_PREFIX
from .conftest import count, history_by_url
from .servers import CountingEndpoint, WorkerProcess, shared_config, wait_until
from .siteapp import PAGES_TABLE, REVISIONS_TABLE
from .test_gunicorn import Gunicorn

SECONDS = 10.0
#: Requests the clients make at least, however long that takes.
MIN_REQUESTS = 50
CLIENTS = 6
PAGES_PER_CLIENT = 8
#: Distance between two edited rows (their own index pages, as in test_host_data.py: under SERIALIZABLE,
#: PostgreSQL's predicate locks on a shared index page would fail the site's own saves against each other).
SPREAD = 400

#: (backend, isolation level of the site's engine, in the app and the worker processes; None: the default).
DATABASES = [
    pytest.param("mariadb", None, id="mariadb-repeatable-read"),
    pytest.param("postgresql", None, id="postgresql-read-committed"),
    pytest.param("postgresql", "REPEATABLE READ", id="postgresql-repeatable-read"),
    pytest.param("postgresql", "SERIALIZABLE", id="postgresql-serializable"),
]


@pytest.fixture
def slow_endpoint() -> Iterator[CountingEndpoint]:
    server = CountingEndpoint(delay=0.01).start()
    yield server
    server.stop()


def page_ids(client: int) -> list[int]:
    return [1 + SPREAD * (client * PAGES_PER_CLIENT + k) for k in range(PAGES_PER_CLIENT)]


@pytest.mark.slow
@pytest.mark.parametrize(("backend", "isolation"), DATABASES)
def test_gunicorn_saves_beside_two_workers(make_app, slow_endpoint, redis_url, tmp_path, backend, isolation):
    options: dict[str, object] = {"pool_pre_ping": True}
    if isolation:
        options["isolation_level"] = isolation
    app = make_app(INDEXNOW_ENDPOINT=slow_endpoint.url, INDEXNOW_CACHE_TYPE="RedisCache",
                   INDEXNOW_CACHE_REDIS_URL=redis_url, SQLALCHEMY_ENGINE_OPTIONS=options)
    db = app.extensions["indexnow"].db
    name = f"{RUN_PREFIX}gunicorn_pages"
    metadata = sa.MetaData()
    pages = sa.Table(name, metadata, sa.Column("id", sa.Integer, primary_key=True),
                     sa.Column("title", sa.String(100), nullable=False),
                     sa.Column("published", sa.Boolean, nullable=False))
    revisions = sa.Table(f"{RUN_PREFIX}gunicorn_revisions", metadata, sa.Column("id", sa.Integer, primary_key=True),
                         sa.Column("page_id", sa.Integer, nullable=False),
                         sa.Column("title", sa.String(100), nullable=False))
    with app.app_context():
        engine = db.engine
    metadata.create_all(engine)
    try:
        with engine.begin() as connection:
            connection.execute(sa.insert(pages), [{"id": n, "title": "v0", "published": True}
                                                  for n in range(1, SPREAD * CLIENTS * PAGES_PER_CLIENT + 1)])
            if backend == "postgresql":
                connection.exec_driver_sql(f"ANALYZE {name}")  # look-ups by the index, not a scan of the table
        config = shared_config(app, **{PAGES_TABLE: name, REVISIONS_TABLE: revisions.name})
        server = Gunicorn(config, tmp_path / "gunicorn.log", "--workers", "3")
        workers = [WorkerProcess(config, tmp_path / f"worker{n}.log") for n in range(2)]
        statuses: list[int] = []
        expected: dict[int, tuple[str, bool, datetime]] = {}
        #: The revision URL of each accepted request → when it was sent; of the refused ones.
        accepted: dict[str, datetime] = {}
        refused: set[str] = set()
        lock = threading.Lock()
        try:
            wait_until(server.answers, 60, "gunicorn to serve")

            deadline, cap = time.monotonic() + SECONDS, time.monotonic() + 5 * SECONDS

            def client(number: int) -> None:
                # SECONDS, or longer on a loaded machine, until MIN_REQUESTS were answered (never past ``cap``).
                http = requests.Session()
                n = 0
                while time.monotonic() < cap and (time.monotonic() < deadline or len(statuses) < MIN_REQUESTS):
                    n += 1
                    pid = page_ids(number)[n % PAGES_PER_CLIENT]
                    # Every 4th visit of a page unpublishes it (a delete); the next publishes it again.
                    title, published = f"c{number}-{n}", (n // PAGES_PER_CLIENT) % 4 != 0
                    began = datetime.now(timezone.utc)
                    answer = http.get(f"{server.url}/edit/{pid}", params={"title": title,
                                                                            "published": int(published)}, timeout=30)
                    revision = revision_url(pid, title)
                    with lock:
                        statuses.append(answer.status_code)
                        if answer.status_code == 200:
                            expected[pid] = (title, published, began)
                            accepted[revision] = began
                        else:
                            refused.add(revision)

            threads = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            wait_until(lambda: count(app) == 0 and count(app, "Inbox") == 0, 120, "the workers to deliver everything",
                       interval=0.5)
        finally:
            server.stop()
            codes = [worker.stop() for worker in workers]
        assert codes == [0, 0], [worker.output() for worker in workers]
        errors = [status for status in statuses if status != 200]
        assert len(statuses) >= MIN_REQUESTS and not errors, (len(statuses), errors[:10], server.output()[-3000:])
        with engine.connect() as connection:
            stored = {row.id: (row.title, row.published) for row in connection.execute(sa.select(pages))}
            stored_revisions = {revision_url(row.page_id, row.title) for row in connection.execute(sa.select(revisions))}
        lost = {pid: want for pid, want in expected.items() if stored[pid] != want[:2]}
        assert not lost
        assert set(accepted) <= stored_revisions, sorted(set(accepted) - stored_revisions)[:5]
        assert not stored_revisions & refused
        delivered = history_by_url(app)
        # Exact: the event of every accepted save, each with a URL of its own, delivered after the request was sent.
        dropped_revisions = [url for url, began in accepted.items()
                             if not any(h.action == "update" and h.created_at >= began for h in delivered.get(url, []))]
        dropped = {}
        for pid, (_title, published, began) in expected.items():
            want = "update" if published else "delete"
            sent = delivered.get(f"https://site.example.com/page/{pid}", [])
            if not any(h.action == want and h.created_at >= began for h in sent):
                dropped[pid] = (want, began, [(h.action, h.created_at) for h in sent[-3:]])
        print(f" {len(statuses)} requests, {len(errors)} not 200; {len(lost)} lost edits; "
              f"{len(dropped)} dropped page events, {len(dropped_revisions)} of {len(accepted)} revision events "
              f"dropped; {sum(map(len, delivered.values()))} deliveries")  # pytest -s -v
        assert not dropped_revisions, (len(dropped_revisions), dropped_revisions[:3])
        assert not dropped, (len(dropped), list(dropped.items())[:3])
        assert not delivered.keys() & refused
    finally:
        metadata.drop_all(engine)


def revision_url(page_id: int, title: str) -> str:
    """The URL of the ``Revision`` row a save adds (see :mod:`.siteapp`)."""
    return f"https://site.example.com/page/{page_id}/rev/{title}"
