"""Real WSGI servers on 127.0.0.1 serving tests/deploy/site.py, each as its own OS process.

One class for all of them: the command line is what differs (gunicorn's
worker classes, waitress). The Werkzeug dev server runs in the test process
instead (tests/live_server.py), as ``flask run`` would.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import requests

from ..scale.servers import LoggedProcess, free_port, site_env, wait_until
from .site import WARM_UP_ENV

APP = "tests.deploy.site:create_app()"

#: name → the command after ``python -m``, given the port.
COMMANDS: dict[str, list[str]] = {
    "gunicorn-sync": ["gunicorn", "--worker-class", "sync", "--workers", "1"],
    "gunicorn-sync-preload": ["gunicorn", "--worker-class", "sync", "--workers", "2", "--preload"],
    "gunicorn-gthread": ["gunicorn", "--worker-class", "gthread", "--workers", "1", "--threads", "4"],
    "gunicorn-gevent": ["gunicorn", "--worker-class", "gevent", "--workers", "1"],
    "waitress": ["waitress", "--threads=4"],
}


class ServerProcess(LoggedProcess):
    """One of :data:`COMMANDS` serving the deploy site until :meth:`stop`."""

    def __init__(self, name: str, config: dict[str, Any], log_path: Path, warm_up: str | None = None) -> None:
        self.name = name
        self.port = free_port()
        env = site_env(config)
        if warm_up is not None:
            env[WARM_UP_ENV] = warm_up
        command = [sys.executable, "-m", *COMMANDS[name]]
        if name.startswith("gunicorn"):
            # --keep-alive: a test's client may keep its connection idle longer than gunicorn's 2 s
            # default (waiting for a tick, which INDEXNOW_TICK_DELAY alone puts 2 s away).
            command += ["--bind", f"127.0.0.1:{self.port}", "--error-logfile", "-", "--timeout", "60",
                        "--keep-alive", "30", APP]
        else:
            command += [f"--listen=127.0.0.1:{self.port}", "--call", APP.removesuffix("()")]
        super().__init__(command, env, log_path)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def answers(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"{self.name} exited: {self.output()}")
        try:
            return requests.get(self.url + "/", timeout=2).status_code == 200
        except requests.RequestException:
            return False

    def __enter__(self) -> ServerProcess:
        try:
            wait_until(self.answers, 60, f"{self.name} to serve")
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
