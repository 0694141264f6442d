"""A throw-away PostgreSQL server of the test's own, which the test may stop and restart.

The shared server on 5432 is never stopped, restarted or reconfigured: other
test runs and other users depend on it. This one is made with ``initdb`` in a
temporary directory, listens on a free loopback port (and a socket in that
directory), and is deleted at the end. ``initdb`` refuses to run as root, so
as root the server runs as the ``postgres`` user (``runuser``), owning its
directory.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

from ..conftest import unavailable
from .servers import free_port

SEARCH = ["/usr/local/bin", *sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)]


def _binaries() -> tuple[str, str] | None:
    """``initdb`` and ``pg_ctl`` of one installation (same directory), or None."""
    on_path = shutil.which("initdb"), shutil.which("pg_ctl")
    if all(on_path) and Path(on_path[0] or "").parent == Path(on_path[1] or "").parent:
        return on_path[0] or "", on_path[1] or ""
    for directory in SEARCH:
        initdb, pg_ctl = Path(directory, "initdb"), Path(directory, "pg_ctl")
        if initdb.exists() and pg_ctl.exists():
            return str(initdb), str(pg_ctl)
    return None


class PrivatePostgres:
    """``initdb`` + ``pg_ctl`` in a temporary directory; ``restart()`` is a real server restart."""

    def __init__(self) -> None:
        found = _binaries()
        if found is None:
            unavailable("a throw-away PostgreSQL", "initdb and pg_ctl were not found")
        self.initdb, self.pg_ctl = found or ("", "")
        self.run_as: list[str] = []
        if os.geteuid() == 0:
            try:
                pwd.getpwnam("postgres")
            except KeyError:
                unavailable("a throw-away PostgreSQL", "running as root without a postgres user for initdb")
            self.run_as = ["runuser", "-u", "postgres", "--"]
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="indexnow-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        if self.run_as:
            shutil.chown(self.root, "postgres", "postgres")

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *args: str, timeout: float = 120) -> None:
        done = subprocess.run([*self.run_as, *args], capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            log = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            raise RuntimeError(f"{' '.join(args[:2])} failed:\n{done.stdout}\n{done.stderr}\n{log}")

    def start(self) -> PrivatePostgres:
        self._run(self.initdb, "-D", str(self.data), "-A", "trust", "-U", "postgres", "-E", "UTF8",
                  "--no-sync")
        self._pg_ctl("start")
        return self

    def _pg_ctl(self, action: str) -> None:
        options = (f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 "
                   "-c fsync=off -c synchronous_commit=off -c full_page_writes=off")
        self._run(self.pg_ctl, "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60", "-m", "fast",
                  "-o", options, action)

    def restart(self) -> None:
        """Stop (closing every connection) and start again on the same port."""
        self._pg_ctl("restart")

    def stop(self) -> None:
        """Stop the server, whatever state it is in, and delete its directory."""
        try:
            if (self.data / "postmaster.pid").exists():
                subprocess.run([*self.run_as, self.pg_ctl, "-D", str(self.data), "-m", "immediate", "-w",
                                "stop"], capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
