"""Issue 19.2: the background ticker that responses wake (flask_indexnow/ticker.py).

The servers themselves are in tests/deploy/; here the ticker's own promises:
wakes merge, the thread ends when idle and starts again, a forked child ticks
on its own thread, interpreter exit lets the tick under way finish, several
apps each have their own, and the close-callback fallback still ticks.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path

import pytest

from flask_indexnow import ticker as ticker_module
from flask_indexnow.config import DEFAULTS
from flask_indexnow.errors import ConfigurationError
from flask_indexnow.testing import wait_for_tick
from flask_indexnow.ticker import Ticker, threads_run, use_thread

from ..conftest import rows
from ..endpoint_server import EndpointServer, Reply
from ..scale.servers import ROOT, shared_config
from ..scale.siteapp import CONFIG_ENV


class Runs:
    """A tick stand-in that records each run and can be held mid-run."""

    def __init__(self) -> None:
        self.calls: list[bool] = []
        self.threads: list[str] = []
        self.started = threading.Event()
        self.release = threading.Event()
        self.release.set()

    def __call__(self, ticking: bool) -> None:
        self.calls.append(ticking)
        self.threads.append(threading.current_thread().name)
        self.started.set()
        assert self.release.wait(10)


def test_a_wake_returns_at_once_and_the_tick_runs_on_the_ticker_thread():
    runs = Runs()
    ticker = Ticker(runs, name="indexnow-tick-test")
    runs.release.clear()
    ticker.wake()  # returns although the tick is held
    assert runs.started.wait(10)
    assert not ticker.idle()
    runs.release.set()
    assert ticker.wait_idle(10)
    assert runs.calls == [True] and runs.threads == ["indexnow-tick-test"]
    assert ticker.stop()


def test_wakes_during_a_tick_merge_into_one_more_tick():
    runs = Runs()
    ticker = Ticker(runs, name="indexnow-tick-test")
    runs.release.clear()
    ticker.wake(ticking=False)
    assert runs.started.wait(10)
    for _ in range(50):  # a burst of responses while the tick runs
        ticker.wake(ticking=False)
    ticker.wake(ticking=True)
    runs.release.set()
    assert ticker.wait_idle(10)
    assert runs.calls == [False, True]  # one more, and a tick, since one of the merged wakes asked for it
    assert ticker.stop()


def idle_unhurried(ticker: Ticker, timeout: float = 10.0) -> bool:
    """Wait for the ticker to be idle without hurrying it (``wait_idle`` would)."""
    deadline = time.monotonic() + timeout
    while not ticker.idle():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_the_wakes_of_a_burst_within_the_delay_are_one_tick():
    runs = Runs()
    ticker = Ticker(runs, name="indexnow-tick-delay", delay=2.0)
    for n in range(10):  # ten responses in 0.2 s, one of them asking for a tick, the others to publish
        ticker.wake(ticking=n == 3)
        time.sleep(0.02)
    assert not runs.started.is_set()  # still gathering: 0.2 s of the 2 s delay
    assert runs.started.wait(10) and idle_unhurried(ticker)
    assert runs.calls == [True]
    assert ticker.stop()


def test_wait_for_tick_and_stop_cut_the_delay_short():
    runs = Runs()
    ticker = Ticker(runs, name="indexnow-tick-hurried", delay=60.0)
    ticker.wake()
    assert ticker.wait_idle(10)  # a minute otherwise
    assert runs.calls == [True]
    ticker.wake(ticking=False)
    deadline = time.monotonic() + 10
    while ticker._wanted is not None and time.monotonic() < deadline:  # until the ticker took it (gathering)
        time.sleep(0.01)
    assert ticker.stop(10)  # the wake taken runs now, not in a minute
    assert runs.calls == [True, False]


def test_the_tick_delay_setting(make_app):
    assert DEFAULTS["INDEXNOW_TICK_DELAY"][0] == 2.0
    assert make_app(INDEXNOW_TICK_DELAY=0).extensions["indexnow"].settings.tick_delay == 0.0
    for bad in (-1, 61, "soon", None):
        with pytest.raises(ConfigurationError, match="INDEXNOW_TICK_DELAY"):
            make_app(INDEXNOW_TICK_DELAY=bad)


def test_the_thread_ends_when_idle_and_the_next_wake_starts_another(monkeypatch):
    monkeypatch.setattr(ticker_module, "IDLE_EXIT", 0.05)
    runs = Runs()
    ticker = Ticker(runs, name="indexnow-tick-test")
    ticker.wake()
    assert ticker.wait_idle(10)
    for _ in range(400):
        if not ticker.running:
            break
        threading.Event().wait(0.01)
    assert not ticker.running
    ticker.wake()
    assert ticker.wait_idle(10)
    assert runs.calls == [True, True]
    assert ticker.stop()


def test_stop_waits_for_the_tick_and_ends_the_thread():
    runs = Runs()
    ticker = Ticker(runs, name="indexnow-tick-test")
    runs.release.clear()
    ticker.wake()
    assert runs.started.wait(10)
    threading.Timer(0.1, runs.release.set).start()
    assert ticker.stop(10)
    assert not ticker.running and runs.calls == [True]


def test_a_failing_run_leaves_the_ticker_working(caplog):
    calls: list[bool] = []

    def run(ticking: bool) -> None:
        calls.append(ticking)
        if len(calls) == 1:
            raise RuntimeError("boom")

    ticker = Ticker(run, name="indexnow-tick-test")
    ticker.wake()
    assert ticker.wait_idle(10)
    ticker.wake()
    assert ticker.wait_idle(10)
    assert calls == [True, True]
    assert "the background tick failed" in caplog.text
    assert ticker.stop()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork() is POSIX only")
def test_a_forked_child_ticks_on_its_own_thread():
    """gunicorn --preload: the parent's ticker thread does not exist in the child."""
    read_end, write_end = os.pipe()
    runs = Runs()
    ticker = Ticker(runs, name="indexnow-tick-test")
    ticker.wake()
    assert ticker.wait_idle(10) and ticker.running  # the parent's thread waits for the next wake
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # 3.12+: "fork() of a multi-threaded process"
        pid = os.fork()
    if pid == 0:  # the child: report whether its wake ran a tick, then leave at once
        try:
            ticker.wake()
            ok = ticker.wait_idle(10) and len(runs.calls) == 2
            os.write(write_end, b"ticked" if ok else b"stuck")
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        answer = pipe.read()
    os.waitpid(pid, 0)
    assert answer == b"ticked"
    assert runs.calls == [True]  # the parent's ticker is untouched
    assert ticker.stop()


def test_interpreter_exit_lets_the_tick_under_way_finish(make_app, endpoint: EndpointServer, tmp_path: Path):
    """A process that exits right after a save (a worker recycled) still delivers, and records it."""
    endpoint.decide = lambda request: Reply(200, delay=1.0)
    app = make_app()
    script = (
        "from tests.deploy.site import create_app\n"
        "app = create_app()\n"
        "app.test_client().post('/save', data={'url': 'https://example.com/last'}).close()\n"
        "print('leaving', flush=True)\n"  # the tick is under way: the endpoint answers in 1 s
    )
    env = dict(os.environ, **{CONFIG_ENV: json.dumps(shared_config(app))})
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert "leaving" in done.stdout
    assert endpoint.urls_received() == ["https://example.com/last"]
    assert rows(app) == []
    assert [row.status for row in rows(app, "History")] == ["success"]


def test_several_apps_in_one_process_each_tick_on_their_own(make_app, endpoint: EndpointServer):
    one, two = make_app(), make_app(INDEXNOW_TABLE_PREFIX=f"{make_app.apps[0].config['INDEXNOW_TABLE_PREFIX']}b_")
    with two.app_context():
        two.extensions["indexnow_test_db"].metadata.create_all(
            two.extensions["indexnow"].db.engine, tables=two.extensions["indexnow"].models.tables)
    make_app.own_prefix.append(two)
    for n, app in enumerate((one, two)):
        app.add_url_rule("/", "home", lambda: "hello")
        with app.app_context():
            app.extensions["indexnow"].extension.enqueue(f"https://example.com/app{n}")
    for app in (one, two):
        app.test_client().get("/").close()
    assert wait_for_tick(one) and wait_for_tick(two)
    assert one.extensions["indexnow"].ticker is not two.extensions["indexnow"].ticker
    assert sorted(endpoint.urls_received()) == ["https://example.com/app0", "https://example.com/app1"]
    assert rows(one) == [] and rows(two) == []


def test_after_response_mode_ticks_in_the_close_callback(make_app, endpoint: EndpointServer):
    app = make_app(INDEXNOW_TICK_MODE="after-response")
    app.add_url_rule("/", "home", lambda: "hello")
    assert app.extensions["indexnow"].ticker is None
    with app.app_context():
        app.extensions["indexnow"].extension.enqueue("https://example.com/a")
    app.test_client().get("/").close()  # the tick ran before close() returned: nothing to wait for
    assert endpoint.urls_received() == ["https://example.com/a"]
    assert rows(app) == []


def test_the_tick_mode_setting(make_app):
    assert DEFAULTS["INDEXNOW_TICK_MODE"][0] == "auto"
    assert make_app(INDEXNOW_TICK_MODE="thread").extensions["indexnow"].ticker is not None
    assert make_app(INDEXNOW_TICK_MODE=" Thread ").extensions["indexnow"].settings.tick_mode == "thread"
    for bad in ("threads", "", None, 1):
        with pytest.raises(ConfigurationError, match="INDEXNOW_TICK_MODE must be one of 'auto', 'thread', "
                                                     "'after-response'"):
            make_app(INDEXNOW_TICK_MODE=bad)


@pytest.mark.parametrize(("options", "expected"), [
    ({}, False),  # uWSGI's default: the app's threads never run
    ({"enable-threads": True}, True),
    ({b"enable-threads": b"true"}, True),
    ({"enable-threads": b"false"}, False),
    ({"threads": b"4"}, True),  # --threads implies --enable-threads
    ({"threads": "0"}, False),
    ({"threads": b"many"}, False),
])
def test_threads_run_under_uwsgi_only_with_threads_enabled(options, expected):
    assert threads_run(options) is expected


def test_outside_uwsgi_threads_run_and_auto_means_thread():
    assert "uwsgi" not in sys.modules
    assert threads_run() is True
    assert use_thread("auto") is True and use_thread("thread") is True
    assert use_thread("after-response") is False
