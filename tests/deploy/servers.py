"""Real WSGI servers on 127.0.0.1 serving tests/deploy/site.py, each as its own OS process.

One class for all of them: the command line is what differs (gunicorn's
worker classes, waitress). The Werkzeug dev server runs in the test process
instead (tests/live_server.py), as ``flask run`` would.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import requests

from ..scale.servers import ROOT, free_port, wait_until
from ..scale.siteapp import CONFIG_ENV
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


class ServerProcess:
    """One of :data:`COMMANDS` serving the deploy site until :meth:`stop`."""

    def __init__(self, name: str, config: dict[str, Any], log_path: Path, warm_up: str | None = None) -> None:
        self.name = name
        self.port = free_port()
        env = dict(os.environ, **{CONFIG_ENV: json.dumps(config)})
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        if warm_up is not None:
            env[WARM_UP_ENV] = warm_up
        command = [sys.executable, "-m", *COMMANDS[name]]
        if name.startswith("gunicorn"):
            command += ["--bind", f"127.0.0.1:{self.port}", "--error-logfile", "-", "--timeout", "60", APP]
        else:
            command += [f"--listen=127.0.0.1:{self.port}", "--call", APP.removesuffix("()")]
        self.log_path = log_path
        self.log = open(log_path, "ab")  # noqa: SIM115 (closed in stop())
        self.process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT)

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

    def stop(self) -> None:
        try:
            if self.process.poll() is None:
                self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        finally:
            self.log.close()

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")
