"""Real parts for the scale tests: a counting endpoint, worker processes, a private Redis.

The endpoint runs in the test process (threads), the workers are OS
processes running ``flask indexnow work`` on :mod:`tests.scale.siteapp`, so
each test sees exactly what a deployment of several workers would do.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from flask import Flask

from ..server_thread import QuietHTTPServer, ServerThread, reset_connection
from .siteapp import CONFIG_ENV

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Answer:
    """How the endpoint answers one POST."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    reset: bool = False
    #: Hold the request until this event is set (or ``delay`` runs out).
    hold: threading.Event | None = None


@dataclass
class Request:
    """One POST as the endpoint saw it, and what it answered."""

    host: str
    urls: list[str]
    answer: Answer


class CountingEndpoint(ServerThread):
    """A fast local IndexNow endpoint that counts every URL it receives.

    ``decide(host, urls)`` picks the answer of each POST (default: 200 after
    ``delay`` seconds). Every request is counted before it is answered, so a
    request whose client died or timed out still counts as sent.
    """

    def __init__(self, decide: Callable[[str, list[str]], Answer] | None = None, delay: float = 0.0) -> None:
        self.counts: Counter[str] = Counter()
        self.requests: list[Request] = []
        self.decide = decide
        self.default = Answer(200, delay=delay)
        self.lock = threading.Lock()
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                host, urls = body["host"], body["urlList"]
                with endpoint.lock:
                    answer = endpoint.decide(host, urls) if endpoint.decide else endpoint.default
                    endpoint.counts.update(urls)
                    endpoint.requests.append(Request(host, urls, answer))
                if answer.hold is not None:
                    answer.hold.wait(answer.delay or 60)
                elif answer.delay:
                    time.sleep(answer.delay)
                if answer.reset:
                    reset_connection(self)
                    return
                self.send_response(answer.status)
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", "0")
                self.end_headers()

        super().__init__(QuietHTTPServer(("127.0.0.1", 0), Handler))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/indexnow"

    def total(self) -> int:
        with self.lock:
            return sum(self.counts.values())


def shared_config(app: Flask, **overrides: Any) -> dict[str, Any]:
    """The settings a worker process needs to share ``app``'s tables, endpoint and cache."""
    config = {
        name: value
        for name, value in app.config.items()
        if name.startswith(("INDEXNOW_", "SQLALCHEMY_DATABASE_URI", "SQLALCHEMY_ENGINE_OPTIONS"))
    }
    config.update(overrides)
    return json.loads(json.dumps(config, default=list))  # frozensets and the like as lists


class WorkerProcess:
    """``flask indexnow work`` on :mod:`tests.scale.siteapp`, as a real OS process."""

    def __init__(self, config: dict[str, Any], log_path: Path, *args: str) -> None:
        env = dict(os.environ, **{CONFIG_ENV: json.dumps(config)})
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        env.pop("FLASK_APP", None)
        self.log_path = log_path
        self.log = open(log_path, "ab")  # noqa: SIM115 (closed in wait())
        self.process = subprocess.Popen(
            [sys.executable, "-m", "flask", "--app", "tests.scale.siteapp:create_app()", "indexnow", "work",
             "--sleep", "0.2", *args],
            cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT,
        )

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        if self.alive():
            self.process.send_signal(signal.SIGKILL)
        self.wait()

    def stop(self, timeout: float = 30) -> int:
        """SIGTERM once the worker runs, then wait for the clean exit; SIGKILL if it does not come.

        A SIGTERM that comes while Python is still importing ends the process
        before the worker could handle it (exit -15): on a loaded machine the
        others may drain the queue before this one has started.
        """
        self.wait_running(timeout)
        if self.alive():
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise

    def wait_running(self, timeout: float) -> None:
        """Until the worker says it runs (its signal handlers are in place), or exits, or ``timeout``."""
        deadline = time.monotonic() + timeout
        while self.alive() and time.monotonic() < deadline:
            if b"IndexNow worker running" in self.log_path.read_bytes():
                return
            time.sleep(0.05)

    def wait(self, timeout: float = 30) -> int:
        try:
            return self.process.wait(timeout)
        finally:
            if self.process.returncode is not None:
                self.log.close()

    def output(self) -> str:
        if not self.log.closed:
            self.log.flush()
        return self.log_path.read_text(errors="replace")


class LoggedProcess:
    """A child process writing its output to ``log_path``: stopped with SIGTERM (then killed), log closed.

    The gunicorn and waitress servers of tests/scale and tests/deploy differ in
    their command lines only; this is what they share.
    """

    def __init__(self, command: list[str], env: dict[str, str], log_path: Path) -> None:
        self.log_path = log_path
        self.log = open(log_path, "ab")  # noqa: SIM115 (closed in stop())
        self.process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT)

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


def site_env(config: dict[str, Any]) -> dict[str, str]:
    """The environment of a served test site: its config as JSON, the repository on the path."""
    env = dict(os.environ, **{CONFIG_ENV: json.dumps(config)})
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PrivateRedis:
    """A redis-server of our own on a free port, which a test may stop (never the shared one)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> PrivateRedis:
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--daemonize", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        wait_until(self._answers, 15, "redis-server to answer")
        return self

    def _answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)


def wait_until(condition: Callable[[], Any], timeout: float, what: str, interval: float = 0.1) -> Any:
    """Poll ``condition`` until it is truthy; fail with ``what`` after ``timeout`` seconds.

    A deadline on a wait, not a timed assertion: a slow machine only waits longer.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(interval)


def drain_with_workers(app: Flask, workers: int, log_dir: Path, remaining: Callable[[], int],
                       fill: Callable[[], None] | None = None) -> list[str]:
    """Start ``workers`` real ``flask indexnow work`` processes, wait until ``remaining()`` is 0, stop them.

    ``fill``: called once every worker runs (its "worker started" line is
    logged), to queue the work then, so that all of them race for it: on a
    loaded machine one worker can drain a queue filled earlier before another
    has finished importing. Every worker must stop cleanly (exit 0); returns
    their logs for further checks.
    """
    config = shared_config(app)
    processes = [WorkerProcess(config, log_dir / f"worker{n}.log") for n in range(workers)]
    try:
        if fill is not None:
            wait_until(lambda: all("IndexNow worker started" in p.output() for p in processes), 120,
                       "every worker to start", interval=0.2)
            fill()
        wait_until(lambda: remaining() == 0, 600, "the workers to drain the queue", interval=0.5)
    finally:
        codes = [process.stop() for process in processes]
    logs = [process.output() for process in processes]
    assert codes == [0] * workers, logs
    return logs
