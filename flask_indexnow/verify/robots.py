"""``robots.txt``: read once per host every few minutes, judged with the standard parser for ``*``.

The file is read the way the pages are (:mod:`.fetch`: in-process or a real
GET) and parsed by :class:`urllib.robotparser.RobotFileParser` (prefix rules;
it knows no ``*`` or ``$`` wildcards). What engines do with the answer is
followed: a 2xx is parsed (up to :data:`MAX_ROBOTS_BYTES`, Google's limit),
any other 4xx or a redirect (not followed) allows everything, a 5xx or no
answer is temporary: the URLs of that host wait, because an engine that
cannot read robots.txt does not crawl the site either.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from urllib.parse import urlsplit
from urllib.robotparser import RobotFileParser

from .. import clock
from .fetch import Fetcher, PageError

#: Seconds a host's robots.txt is kept in this process.
ROBOTS_TTL = 300.0
#: Seconds an unreadable robots.txt is remembered as such (the host's URLs wait meanwhile).
ROBOTS_ERROR_TTL = 30.0
#: Hosts whose robots.txt one process keeps at most.
MAX_HOSTS = 1000
#: Bytes of robots.txt parsed at most (what Google reads).
MAX_ROBOTS_BYTES = 500 * 1024


@dataclass(frozen=True)
class Robots:
    """One host's robots.txt as read at ``read_at`` (a timestamp): its rules, or why it could not be read."""

    origin: str
    parser: RobotFileParser | None  # None: everything is allowed (no file, a 4xx, a redirect)
    read_at: float
    problem: str | None = None  # set: could not be read now (temporary)

    def allows(self, url: str) -> bool:
        return self.parser is None or self.parser.can_fetch("*", url)

    @property
    def blocks_site(self) -> bool:
        """``Disallow: /`` for ``*``: a site not launched yet (a staging copy)."""
        return self.problem is None and not self.allows(self.origin + "/")

    def expired(self, now: float) -> bool:
        return now - self.read_at >= (ROBOTS_ERROR_TTL if self.problem else ROBOTS_TTL)


class RobotsCache:
    """The robots.txt of each host this process has looked at, for :data:`ROBOTS_TTL` seconds."""

    def __init__(self) -> None:
        self._entries: OrderedDict[str, Robots] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, url: str, fetch: Fetcher) -> Robots:
        """The robots.txt of ``url``'s origin (read with ``fetch`` when not known or too old)."""
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        now = clock.utcnow().timestamp()
        with self._lock:
            known = self._entries.get(origin)
        if known is not None and not known.expired(now):
            return known
        found = read_robots(origin, fetch, now)
        with self._lock:
            self._entries[origin] = found
            self._entries.move_to_end(origin)
            while len(self._entries) > MAX_HOSTS:
                self._entries.popitem(last=False)
        return found

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


def read_robots(origin: str, fetch: Fetcher, now: float) -> Robots:
    """Read and parse ``origin``'s robots.txt (see the module's docstring for what each answer means)."""
    try:
        answer = fetch(origin + "/robots.txt")
    except PageError as exc:
        return Robots(origin, None, now, f"robots.txt could not be read: {exc}")
    if answer.status >= 500 or answer.status == 429:
        return Robots(origin, None, now, f"robots.txt answered HTTP {answer.status}")
    if not 200 <= answer.status < 300:
        return Robots(origin, None, now)
    parser = RobotFileParser(origin + "/robots.txt")
    parser.parse(answer.body[:MAX_ROBOTS_BYTES].decode("utf-8", errors="replace").splitlines())
    return Robots(origin, parser, now)
