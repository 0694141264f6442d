"""The processes of one machine take turns ticking, even without a shared cache.

With SimpleCache every gunicorn worker had a tick lock of its own, so four
workers on one SQLite file ticked at the same moments and queued for its one
writer lock with the site's saves (p95 of a paced editing workload: about 1 s,
against 38 ms with the lock file). The holder here is a real second process.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator

import pytest
from flask import Flask

from flask_indexnow import tick as tick_module
from flask_indexnow.machinelock import MachineLock, lock_path

from ..conftest import rows


def ext(app: Flask):
    return app.extensions["indexnow"].extension


@pytest.fixture
def holder() -> Iterator[type[Holder]]:
    made: list[Holder] = []

    class Made(Holder):
        def __init__(self, path: str) -> None:
            super().__init__(path)
            made.append(self)

    yield Made
    for one in made:
        one.stop()


class Holder:
    """Another process holding the lock file until told to let go."""

    SCRIPT = textwrap.dedent("""
        import fcntl, os, sys
        fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        print("held", flush=True)
        sys.stdin.readline()
    """)

    def __init__(self, path: str) -> None:
        self.process = subprocess.Popen([sys.executable, "-c", self.SCRIPT, path], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None and self.process.stdout.readline().strip() == "held"

    def stop(self) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        if not self.process.stdin.closed:
            self.process.stdin.write("\n")
            self.process.stdin.close()
        self.process.wait(10)
        self.process.stdout.close()


def app_lock_path(app: Flask) -> str:
    with app.app_context():
        return tick_module._machine_lock(app.extensions["indexnow"]).path


def test_a_tick_in_a_close_callback_skips_while_another_process_ticks(app: Flask, endpoint, holder) -> None:
    ext(app).enqueue("https://example.com/a")
    other = holder(app_lock_path(app))
    with app.app_context():
        assert tick_module.tick(app.extensions["indexnow"], wait=False) is None
    assert len(rows(app)) == 1, "the row waits: another process is ticking"
    other.stop()
    with app.app_context():
        result = tick_module.tick(app.extensions["indexnow"], wait=False)
    assert result is not None and result.succeeded == 1
    assert endpoint.urls == ["https://example.com/a"]


def test_the_tick_thread_waits_for_the_other_process_then_delivers(app: Flask, endpoint, holder) -> None:
    ext(app).enqueue("https://example.com/a")
    other = holder(app_lock_path(app))
    threading.Timer(0.5, other.stop).start()
    started = time.monotonic()
    with app.app_context():
        result = tick_module.tick(app.extensions["indexnow"], wait=True)
    assert time.monotonic() - started >= 0.4, "it did not wait for the other process"
    assert result is not None and result.succeeded == 1


def test_the_lock_file_is_free_after_a_tick(app: Flask, endpoint) -> None:
    ext(app).enqueue("https://example.com/a")
    ext(app).tick()
    other = MachineLock(app_lock_path(app))
    assert other.acquire()
    other.release()


def test_one_lock_file_per_database_and_prefix(make_app, tmp_path) -> None:
    first = make_app()
    same_site = make_app(INDEXNOW_TABLE_PREFIX=first.config["INDEXNOW_TABLE_PREFIX"])
    other_prefix = make_app(INDEXNOW_TABLE_PREFIX="other_", create_tables=False)
    other_database = make_app(SQLALCHEMY_DATABASE_URI=f"sqlite:///{tmp_path / 'other.db'}",
                              INDEXNOW_TABLE_PREFIX=first.config["INDEXNOW_TABLE_PREFIX"])
    assert app_lock_path(first) == app_lock_path(same_site)
    assert len({app_lock_path(first), app_lock_path(other_prefix), app_lock_path(other_database)}) == 3


def test_two_holders_exclude_each_other_and_a_waiter_gets_it_on_release(tmp_path) -> None:
    path = lock_path(str(tmp_path))
    one, two = MachineLock(path), MachineLock(path)
    assert one.acquire()
    assert not two.acquire()
    threading.Timer(0.2, one.release).start()
    assert two.acquire(wait=5)
    assert not one.acquire()
    two.release()
    assert one.acquire()
    one.release()


def test_a_forked_child_drops_the_parents_held_lock(app: Flask, endpoint) -> None:
    state = app.extensions["indexnow"]
    with app.app_context():
        lock = tick_module._machine_lock(state)
    assert lock.acquire()
    tick_module._after_fork(state)  # what the child runs after gunicorn forks it
    assert lock.fd is None
    again = MachineLock(lock.path)
    assert again.acquire(), "the child's copy of a held descriptor was left open"
    again.release()
