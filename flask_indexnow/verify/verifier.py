"""One URL's verdict: robots.txt first (cached), then the page itself.

:class:`Verifier` holds what a run of verifications shares: the mode, the app,
the HTTP session of ``"http"`` mode (kept alive across one pass's URLs, then
closed) and the process's robots.txt cache (``state.robots_cache``).
"""

from __future__ import annotations

from types import TracebackType
from urllib.parse import urlsplit

from flask import Flask

from ..state import IndexNowState
from . import fetch
from .page import PageAnswer, judge
from .robots import RobotsCache
from .verdict import Verdict

#: The modes of INDEXNOW_VERIFY (None: no verification).
MODES = ("app", "http")


def robots_cache(state: IndexNowState) -> RobotsCache:
    """This process's robots.txt cache for the app, made on first use."""
    cache = state.robots_cache
    if cache is None:
        with state.lock:
            cache = state.robots_cache
            if cache is None:
                cache = state.robots_cache = RobotsCache()
    assert isinstance(cache, RobotsCache)
    return cache


class Verifier:
    """Verdicts for URLs of one app in one mode (``"app"`` or ``"http"``); use it as a context manager.

    ``deadline`` (a :func:`time.monotonic` instant) bounds every HTTP request of ``"http"`` mode.
    """

    def __init__(self, state: IndexNowState, app: Flask, mode: str, *, deadline: float | None = None) -> None:
        if mode not in MODES:
            raise ValueError(f"verification mode must be one of {', '.join(MODES)}, got {mode!r}")
        self.state = state
        self.app = app
        self.mode = mode
        self.deadline = deadline
        self.robots = robots_cache(state)
        self._session = fetch.http_session() if mode == "http" else None

    def __enter__(self) -> Verifier:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        if self._session is not None:
            self._session.close()
            self._session = None

    def fetch(self, url: str) -> PageAnswer:
        """GET ``url`` in this verifier's mode (raises :class:`~.fetch.PageError`)."""
        if self._session is None:
            if self.mode == "http":
                raise RuntimeError("this Verifier is closed")
            return fetch.from_app(self.app, url)
        settings = self.state.settings
        return fetch.over_http(self._session, url, timeout=settings.timeout,
                               allow_private=settings.allow_private_endpoint, deadline=self.deadline)

    def verify(self, url: str) -> Verdict:
        """The verdict for ``url`` (never raises for what the site answers)."""
        robots = self.robots.get(url, self.fetch)
        if robots.problem:
            return Verdict(url, "error", robots.problem)
        if not robots.allows(url):
            parts = urlsplit(url)
            if robots.blocks_site:
                return Verdict(url, "robots", f"robots.txt of {parts.netloc} disallows every page")
            return Verdict(url, "robots", f"robots.txt disallows {parts.path or '/'}")
        try:
            answer = self.fetch(url)
        except fetch.PageError as exc:
            return Verdict(url, "error", str(exc))
        return judge(url, answer)
