"""Issue 18 under real processes: gunicorn (3 sync workers) saving pages while 2 ``flask indexnow work`` deliver.

Client threads edit their own pages of a watched model through HTTP for
:data:`SECONDS`; each request is a site's own save (the row and its event in
one transaction) followed by the response's tick. Two worker processes run
passes the whole time. No request may answer 500, and every accepted change
must be in the database and delivered after it was made.
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
from .conftest import SERVER_BACKENDS, count, history_by_url
from .servers import CountingEndpoint, WorkerProcess, shared_config, wait_until
from .siteapp import PAGES_TABLE
from .test_gunicorn import Gunicorn

SECONDS = 8.0
#: Requests the clients make at least, however long that takes.
MIN_REQUESTS = 40
CLIENTS = 6
PAGES_PER_CLIENT = 8
#: Distance between two edited rows (their own index pages, as in test_host_data.py).
SPREAD = 50


@pytest.fixture
def slow_endpoint() -> Iterator[CountingEndpoint]:
    server = CountingEndpoint(delay=0.01).start()
    yield server
    server.stop()


def page_ids(client: int) -> list[int]:
    return [1 + SPREAD * (client * PAGES_PER_CLIENT + k) for k in range(PAGES_PER_CLIENT)]


@pytest.mark.slow
@pytest.mark.parametrize("backend", SERVER_BACKENDS)
def test_gunicorn_saves_beside_two_workers(make_app, slow_endpoint, redis_url, tmp_path):
    app = make_app(INDEXNOW_ENDPOINT=slow_endpoint.url, INDEXNOW_CACHE_TYPE="RedisCache",
                   INDEXNOW_CACHE_REDIS_URL=redis_url)
    db = app.extensions["indexnow"].db
    name = f"{RUN_PREFIX}gunicorn_pages"
    pages = sa.Table(name, sa.MetaData(), sa.Column("id", sa.Integer, primary_key=True),
                     sa.Column("title", sa.String(100), nullable=False),
                     sa.Column("published", sa.Boolean, nullable=False))
    with app.app_context():
        engine = db.engine
    pages.create(engine)
    try:
        with engine.begin() as connection:
            connection.execute(sa.insert(pages), [{"id": n, "title": "v0", "published": True}
                                                  for n in range(1, SPREAD * CLIENTS * PAGES_PER_CLIENT + 1)])
        config = shared_config(app, **{PAGES_TABLE: name})
        server = Gunicorn(config, tmp_path / "gunicorn.log", "--workers", "3")
        workers = [WorkerProcess(config, tmp_path / f"worker{n}.log") for n in range(2)]
        statuses: list[int] = []
        expected: dict[int, tuple[str, bool, datetime]] = {}
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
                    with lock:
                        statuses.append(answer.status_code)
                        if answer.status_code == 200:
                            expected[pid] = (title, published, began)

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
        lost = {pid: want for pid, want in expected.items() if stored[pid] != want[:2]}
        assert not lost
        delivered = history_by_url(app)
        dropped = {}
        for pid, (_title, published, began) in expected.items():
            want = "update" if published else "delete"
            sent = delivered.get(f"https://site.example.com/page/{pid}", [])
            if not any(h.action == want and h.created_at >= began for h in sent):
                dropped[pid] = (want, began, [(h.action, h.created_at) for h in sent[-3:]])
        print(f" {len(statuses)} requests, {len(errors)} not 200; {len(lost)} lost edits; "
              f"{len(dropped)} dropped events; {sum(map(len, delivered.values()))} deliveries")  # pytest -s -v
        assert not dropped, (len(dropped), list(dropped.items())[:3])
    finally:
        pages.drop(engine)
