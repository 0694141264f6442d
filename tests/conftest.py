"""Fixtures: an app factory on every real backend, a movable clock, a local endpoint.

Backends are found through environment variables (defaults: the local
services). A missing service skips its tests, except under ``CI=true``, where
it fails them: CI must prove every backend.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from flask import Flask
from flask_caching import Cache
from flask_sqlalchemy import SQLAlchemy

from flask_indexnow import IndexNow
from flask_indexnow import clock as clock_module
from flask_indexnow.delivery.merge import merge_inbox

from . import network_guard
from .endpoint_server import EndpointServer

network_guard.install()

POSTGRES_URL = os.environ.get("INDEXNOW_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
MYSQL_URL = os.environ.get("INDEXNOW_TEST_MYSQL_URL", "mysql+pymysql://root@127.0.0.1:3306/test")
REDIS_URL = os.environ.get("INDEXNOW_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
IN_CI = os.environ.get("CI", "").lower() == "true"
KEY = "3f1c0d7e8a9b4c5d"
#: Where apps send when a test does not ask for the ``endpoint`` fixture: a closed
#: loopback port, so a stray delivery fails fast and never leaves the machine.
NOWHERE_ENDPOINT = "http://127.0.0.1:9/indexnow"
#: One prefix per test process: concurrent runs on the shared servers never meet.
RUN_PREFIX = f"t{uuid.uuid4().hex[:8]}_"

#: The settings the allow-list is made from (SPEC §12).
HOST_SETTINGS = ("INDEXNOW_ALLOWED_HOSTS", "INDEXNOW_BASE_URL", "SERVER_NAME")

BACKENDS = ["sqlite", "postgresql", "mariadb"]
SERVER_URLS = {"postgresql": POSTGRES_URL, "mariadb": MYSQL_URL}

_available: dict[str, str | None] = {}


def unavailable(what: str, reason: str) -> None:
    """Skip for a missing service; fail under CI, where every service must be there."""
    message = f"{what} is not reachable: {reason}"
    if IN_CI:
        pytest.fail(message + " (CI=true: a missing service is a failure)")
    pytest.skip(message)


def require_server(backend: str) -> str:
    url = SERVER_URLS[backend]
    if backend not in _available:
        try:
            engine = sa.create_engine(url)
            with engine.connect() as connection:
                connection.execute(sa.text("SELECT 1"))
            engine.dispose()
            _available[backend] = None
        except Exception as exc:  # noqa: BLE001
            _available[backend] = str(exc).splitlines()[0]
    if _available[backend] is not None:
        unavailable(backend, _available[backend] or "")
    return url


def require_redis() -> str:
    if "redis" not in _available:
        try:
            import redis

            redis.Redis.from_url(REDIS_URL, socket_timeout=2).ping()
            _available["redis"] = None
        except Exception as exc:  # noqa: BLE001
            _available["redis"] = str(exc)
    if _available["redis"] is not None:
        unavailable("Redis", _available["redis"] or "")
    return REDIS_URL


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float = 0, **kw: float) -> datetime:
        self.now += timedelta(seconds=seconds, **kw)
        return self.now

    def set(self, when: datetime) -> None:
        self.now = when


@pytest.fixture(autouse=True)
def loopback_only() -> Iterator[None]:
    """Fail the test that tried to reach anything but loopback (see ``network_guard``)."""
    network_guard.take_attempts()
    yield
    attempts = network_guard.take_attempts()
    if attempts:
        pytest.fail(f"the test tried to reach beyond loopback: {', '.join(attempts)}")


@pytest.fixture
def clock() -> Iterator[FakeClock]:
    fake = FakeClock(datetime.now(timezone.utc).replace(microsecond=0))
    clock_module.set_source(fake)
    yield fake
    clock_module.set_source(None)


@pytest.fixture
def endpoint() -> Iterator[EndpointServer]:
    server = EndpointServer().start()
    yield server
    server.stop()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Give ``backend`` its databases: SQLite, or all three where behaviour differs by database.

    A test that reaches a database (through ``make_app``, ``app`` or
    ``backend`` itself) runs on SQLite. ``@pytest.mark.every_backend`` (or a
    module's ``pytestmark``) runs it on PostgreSQL and MariaDB as well: the
    tests of what each database does its own way (upserts, claims, locks,
    transactions, DDL, datetimes, column sizes). Logic that reads and writes
    through those same paths needs no second and third run. A test may also
    name its own list with ``@pytest.mark.parametrize("backend", [...])``.
    """
    if "backend" not in metafunc.fixturenames:
        return
    for marker in metafunc.definition.iter_markers("parametrize"):
        names = marker.args[0]
        if "backend" in (names.replace(" ", "").split(",") if isinstance(names, str) else names):
            return
    every = metafunc.definition.get_closest_marker("every_backend") is not None
    metafunc.parametrize("backend", BACKENDS if every else ["sqlite"])


#: (database URL, prefix) → the tables made there, dropped at the end of the run.
_created: dict[tuple[str, str], list[sa.Table]] = {}


def database_url(backend: str, tmp_path: Any) -> str:
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / 'site.db'}"
    return require_server(backend)


class AppFactory:
    """Builds apps with the extension on one backend; tears them all down after the test."""

    def __init__(self, backend: str, tmp_path: Any, endpoint_url: str | None) -> None:
        self.backend = backend
        self.tmp_path = tmp_path
        self.endpoint_url = endpoint_url
        self.apps: list[Flask] = []
        #: Apps with a prefix of their own whose tables the test may create (``init-db``):
        #: dropped at the end of the test, so a failed test leaves nothing behind.
        self.own_prefix: list[Flask] = []

    def __call__(
        self,
        *,
        db: SQLAlchemy | None = None,
        indexnow: IndexNow | None = None,
        cache: Cache | None | bool = None,
        create_tables: bool = True,
        **config: Any,
    ) -> Flask:
        app = Flask(f"test_{len(self.apps)}")
        prefix = config.pop("INDEXNOW_TABLE_PREFIX", RUN_PREFIX)
        if all(config.get(name) is None for name in HOST_SETTINGS):
            # Most tests queue URLs of many made-up hosts: they opt out of the closed
            # allow-list, unless they set one of its sources (an explicit
            # INDEXNOW_ALLOWED_HOSTS=None tests the closed default itself).
            config.setdefault("INDEXNOW_ALLOWED_HOSTS", "*")
        app.config.update(
            TESTING=True,
            SECRET_KEY="test-secret",
            SQLALCHEMY_DATABASE_URI=database_url(self.backend, self.tmp_path),
            SQLALCHEMY_ENGINE_OPTIONS={"pool_pre_ping": True},
            INDEXNOW_KEY=KEY,
            INDEXNOW_ENDPOINT=self.endpoint_url or NOWHERE_ENDPOINT,
            INDEXNOW_ALLOW_PRIVATE_ENDPOINT=True,
            INDEXNOW_TABLE_PREFIX=prefix,
            INDEXNOW_CACHE_KEY_PREFIX=f"{RUN_PREFIX}{uuid.uuid4().hex[:6]}:",
        )
        app.config.update(config)
        db = db or SQLAlchemy()
        db.init_app(app)
        cache_obj: Cache | None = None
        if isinstance(cache, Cache):
            cache_obj = cache
            cache_obj.init_app(app)
        ext = indexnow or IndexNow()
        ext.init_app(app, db=db, cache=cache_obj)
        app.extensions["indexnow_test_db"] = db
        self.apps.append(app)
        if not create_tables and prefix != RUN_PREFIX:
            self.own_prefix.append(app)
        if create_tables:
            with app.app_context():
                state = app.extensions["indexnow"]
                key = (str(db.engine.url), prefix)
                if self.backend == "sqlite" and _sqlite_from_template(db.engine, state.models.tables):
                    return app  # a fresh copy of the empty schema: nothing to create or clear
                if self.backend == "sqlite" or key not in _created:
                    db.metadata.create_all(db.engine, tables=state.models.tables)
                    _created[key] = state.models.tables
                _clear(db.engine, state.models.tables)
        return app

    def close(self) -> None:
        """Dispose of every app's engines; fail if one still had a connection out.

        A connection still checked out (by a thread the test left running, say)
        escapes the disposal and is closed by the garbage collector whenever it
        next runs, which fails some later, innocent test. Failing here names
        the test that leaked it.
        """
        for app in self.own_prefix:
            with app.app_context():
                state = app.extensions["indexnow"]
                state.db.session.remove()
                state.db.metadata.drop_all(state.db.engine, tables=state.models.tables, checkfirst=True)
                _created.pop((str(state.db.engine.url), state.prefix), None)
        for app in self.apps:  # a tick still running in the background would hold a connection
            ticker = app.extensions["indexnow"].ticker
            if ticker is not None:
                ticker.stop()
        leaked = []
        for app in self.apps:
            with app.app_context():
                db = app.extensions["indexnow_test_db"]
                db.session.remove()
                for engine in db.engines.values():
                    if not _all_checked_in(engine.pool):
                        leaked.append(engine.url.get_backend_name())
                    engine.dispose()
        if leaked:
            pytest.fail(f"the test ended with database connections still in use ({', '.join(leaked)})")


def _all_checked_in(pool: sa.pool.Pool, wait: float = 5.0) -> bool:
    """True once ``pool`` has no connection checked out (waiting up to ``wait`` seconds)."""
    checked_out = getattr(pool, "checkedout", None)
    if checked_out is None:  # pools that keep no count (NullPool, StaticPool)
        return True
    deadline = time.monotonic() + wait
    while checked_out() > 0:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


#: (table names) → an SQLite file holding just those tables, empty (made once per process).
_sqlite_templates: dict[tuple[str, ...], Path] = {}


def _sqlite_from_template(engine: sa.Engine, tables: list[sa.Table]) -> bool:
    """Give a test's not-yet-created SQLite file the schema by copying an empty one.

    ``create_all`` on a fresh file is one autocommitted (fsynced) statement per
    table and index, about 20 of them: on a busy disk that was the larger part
    of every SQLite test's set-up. The copy is the same schema, made by the
    same ``create_all`` once per process. A file that already exists (a second
    app of the same test) is left to ``create_all`` and ``_clear`` as before.
    """
    database = engine.url.database
    if not database or database == ":memory:" or Path(database).exists():
        return False
    names = tuple(table.name for table in tables)
    template = _sqlite_templates.get(names)
    if template is None:
        template = Path(tempfile.mkdtemp(prefix="indexnow-schema-")) / "schema.db"
        maker = sa.create_engine(f"sqlite:///{template}")
        try:
            tables[0].metadata.create_all(maker, tables=tables)
        finally:
            maker.dispose()
        _sqlite_templates[names] = template
    shutil.copyfile(template, database)
    return True


def _clear(engine: sa.Engine, tables: list[sa.Table]) -> None:
    with engine.begin() as connection:
        for table in tables:
            connection.execute(table.delete())


@pytest.fixture
def make_app(backend: str, tmp_path: Any, request: pytest.FixtureRequest) -> Iterator[AppFactory]:
    endpoint_url = None
    if "endpoint" in request.fixturenames:
        endpoint_url = request.getfixturevalue("endpoint").url
    factory = AppFactory(backend, tmp_path, endpoint_url)
    yield factory
    factory.close()


@pytest.fixture
def app(make_app: AppFactory) -> Iterator[Flask]:
    application = make_app()
    with application.app_context():
        yield application


@pytest.fixture
def redis_url() -> str:
    return require_redis()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Drop this run's tables from the shared servers (and the SQLite schema templates)."""
    for template in _sqlite_templates.values():
        shutil.rmtree(template.parent, ignore_errors=True)
    for (url, _prefix), tables in _created.items():
        if url.startswith("sqlite"):
            continue
        engine = sa.create_engine(url)
        try:
            tables[0].metadata.drop_all(engine, tables=tables)
        except Exception:  # noqa: BLE001
            pass
        finally:
            engine.dispose()


@contextlib.contextmanager
def site_table(db: SQLAlchemy, model: Any) -> Iterator[None]:
    """A test site's own model table, for the length of the block (inside an app context).

    The session is rolled back and removed before the table is dropped, so no
    open transaction holds a lock on it.
    """
    model.__table__.create(db.engine, checkfirst=True)
    try:
        yield
    finally:
        db.session.rollback()
        db.session.remove()
        model.__table__.drop(db.engine)


def rows(app: Flask, model: str = "Queue", **where: Any) -> list[Any]:
    """All rows of one of the extension's tables (as Row objects), optionally filtered.

    The queue is read as the next pass sees it: what waits in the inbox (rows
    queued inside the site's transactions) is merged first.
    """
    state = app.extensions["indexnow"]
    table = getattr(state.models, model).__table__
    if model == "Queue":
        with app.app_context():
            merge_inbox(state, state.engine())
    query = sa.select(table).where(*(table.c[k] == v for k, v in where.items())).order_by(table.c.id)
    with app.app_context(), state.db.engine.connect() as connection:
        return list(connection.execute(query))




#: Fixtures that reach a database or Redis: a test that uses one is in the ``db`` tier.
DB_FIXTURES = {"backend", "make_app", "app", "redis_url"}
SKIP_BROWSER = os.environ.get("INDEXNOW_SKIP_BROWSER", "").lower() in ("1", "true", "yes")


_uses_hypothesis: dict[str, bool] = {}


def _is_property_test(item: pytest.Item) -> bool:
    """True for the tests of a module that uses Hypothesis (its tests run thousands of examples)."""
    module = getattr(item, "module", None)
    if module is None:
        return False
    if module.__name__ not in _uses_hypothesis:
        _uses_hypothesis[module.__name__] = any(
            getattr(value, "__module__", "").startswith("hypothesis") for value in vars(module).values()
        )
    return _uses_hypothesis[module.__name__]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the ``db`` tier (``-m "not db"`` is the fast tier); skip browser tests on request.

    ``INDEXNOW_SKIP_BROWSER=1`` is for a contributor without root (no Chromium):
    under ``CI=true`` it is ignored, CI must run the browser tests.
    The ``slow`` tests go first, then the other scale tests (worker processes,
    private servers), then the modules with property tests (thousands of
    Hypothesis examples; a stable sort): under pytest-xdist the longest tests
    then overlap the many short ones instead of ending the run alone.
    """
    items.sort(key=lambda item: (item.get_closest_marker("slow") is None, "scale" not in item.path.parts,
                                 not _is_property_test(item)))
    for item in items:
        if DB_FIXTURES & set(getattr(item, "fixturenames", ())) and item.get_closest_marker("db") is None:
            item.add_marker(pytest.mark.db)
        if SKIP_BROWSER and not IN_CI and item.get_closest_marker("browser") is not None:
            item.add_marker(pytest.mark.skip(reason="INDEXNOW_SKIP_BROWSER=1 (local runs only)"))
