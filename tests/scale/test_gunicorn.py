"""Issue 9.9 under a real gunicorn: a tick never holds a sync worker hostage.

One sync worker, an endpoint that accepts every connection and never answers,
INDEXNOW_TIMEOUT of 10 s and three hosts queued: without a budget, one tick
would wait 3 × 10 s and gunicorn (``--timeout 4``) would kill the worker
(``WORKER TIMEOUT``). With INDEXNOW_TICK_BUDGET = 2 every tick ends in time,
the worker keeps serving, and the rows end up ``pending`` again. Since issue 19
the tick runs on the worker's tick thread, so the worker serves even while a
tick waits; the budget still bounds each tick (its rows are tried once each).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import requests

from ..conftest import rows
from ..silent_server import SilentServer
from .conftest import ext
from .servers import LoggedProcess, free_port, shared_config, site_env, wait_until

BUDGET = 2
GUNICORN_TIMEOUT = 4
HOSTS = ["a.example.com", "b.example.com", "c.example.com"]


class Gunicorn(LoggedProcess):
    """``gunicorn`` with sync workers serving :mod:`tests.scale.siteapp`, as a real OS process."""

    def __init__(self, config: dict[str, object], log_path: Path, *args: str) -> None:
        self.port = free_port()
        super().__init__(
            [sys.executable, "-m", "gunicorn", "--bind", f"127.0.0.1:{self.port}", "--worker-class", "sync",
             "--log-level", "info", "--error-logfile", "-", *args, "tests.scale.siteapp:create_app()"],
            site_env(config), log_path,
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def answers(self) -> bool:
        try:
            return requests.get(self.url + "/", timeout=1).status_code == 200
        except requests.RequestException:
            return False


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_ticks_never_hold_a_sync_worker_hostage(make_app, tmp_path):
    with SilentServer() as silent:
        app = make_app(INDEXNOW_ENDPOINT=silent.url, INDEXNOW_TIMEOUT=10, INDEXNOW_TICK_BUDGET=BUDGET)
        with app.app_context():
            for host in HOSTS:
                ext(app).enqueue(f"https://{host}/page")
        server = Gunicorn(shared_config(app), tmp_path / "gunicorn.log", "--workers", "1",
                          "--timeout", str(GUNICORN_TIMEOUT), "--graceful-timeout", str(GUNICORN_TIMEOUT))
        try:
            wait_until(server.answers, 30, "gunicorn to serve")
            # Each response wakes the worker's background tick; visitors keep coming while ticks run.
            pages = []

            def tried_once() -> bool:
                pages.append(requests.get(server.url + "/", timeout=30))
                return [row.attempts for row in rows(app)] == [1] * len(HOSTS)

            # One POST per tick, each cut at the budget: every host's row has been tried once.
            wait_until(tried_once, 60, "every row to be tried once", interval=0.2)
            assert [(page.status_code, page.text) for page in pages] == [(200, "hello")] * len(pages)
        finally:
            server.stop()
    log = server.output()
    assert "WORKER TIMEOUT" not in log, log
    assert "Booting worker" in log and log.count("Booting worker") == 1, log  # the worker was never replaced
    after = rows(app)
    assert [(row.status, row.claim_token, row.attempts) for row in after] == [("pending", None, 1)] * len(HOSTS)
    assert all("tick budget" in row.last_error for row in after)
    assert silent.accepted() == len(HOSTS)
