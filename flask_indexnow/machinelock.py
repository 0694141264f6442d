"""One tick at a time among the processes of one machine, without a shared cache.

The tick lock lives in the cache (lock.py): with Redis every process of every
machine takes turns. With the default SimpleCache each process has a cache,
and so a lock, of its own: four gunicorn workers on one SQLite database then
tick at the same moments, and their write transactions queue for SQLite's one
writer lock together with the site's own saves (whose wait for that lock is
SQLite's busy handler, sleeping up to 100 ms a try). A lock file in the
temporary directory, taken with ``flock``, makes the processes of one machine
take turns whatever the cache. Like the cache lock it only saves work: the
database claim is what gives each row to one pass.

Where ``flock`` does not exist (Windows) or the file cannot be opened, the
lock is always free, as before it existed.
"""

from __future__ import annotations

import errno
import hashlib
import os
import tempfile
import time

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

#: Seconds between two tries while waiting for another process's tick.
POLL = 0.02


def lock_path(identity: str) -> str:
    """The lock file of the site that ``identity`` names (its database and cache key), in the temp directory."""
    digest = hashlib.sha256(identity.encode()).hexdigest()[:24]
    return os.path.join(tempfile.gettempdir(), f"flask-indexnow-tick-{digest}.lock")


class MachineLock:
    """An exclusive ``flock`` on a file: held by at most one process of this machine at a time."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.fd: int | None = None

    def acquire(self, wait: float = 0.0) -> bool:
        """Take the lock, waiting up to ``wait`` seconds for another process to give it back.

        True when held, or when this platform or file allows no lock (ticks then run as without it).
        """
        if fcntl is None:
            return True
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
        except OSError:
            return True  # another user's file, a read-only temp directory: no lock to take
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK) or time.monotonic() >= deadline:
                    os.close(fd)
                    return exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK)
                time.sleep(POLL)
                continue
            self.fd = fd
            return True

    def release(self) -> None:
        """Give the lock back: closing the file unlocks it.

        Also what a forked child does with a descriptor it inherited while the parent held the
        lock: ``flock`` ends only when every copy is closed, so the parent keeps it.
        """
        fd, self.fd = self.fd, None
        if fd is not None:
            os.close(fd)
