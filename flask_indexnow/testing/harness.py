"""One object for a site's test: the recorder, the apps aimed at it, and what was queued and sent."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .helpers import QueuedURL, deliver, point_app_at, queued, queued_urls, wait_for_tick
from .recorder import Received, RecordingEndpoint, Reply

if TYPE_CHECKING:
    from flask import Flask

    from ..delivery.worker import PassResult


class IndexNowHarness:
    """What the ``indexnow`` fixture gives a test.

    ``use(app)`` aims an already built app at the recorder (undone when the
    test ends); ``queued_urls(app)`` reads the queue; ``deliver(app)`` runs a
    worker pass; ``sent_urls`` is what the recorder received.
    """

    def __init__(self, endpoint: RecordingEndpoint) -> None:
        self.endpoint = endpoint
        self._undo: list[Callable[[], None]] = []

    def use(self, app: Flask) -> Flask:
        """Send ``app``'s deliveries to the recorder until the test ends; returns ``app``."""
        self._undo.append(point_app_at(app, self.endpoint))
        return app

    def queued(self, app: Flask, *, status: str | None = None) -> list[QueuedURL]:
        return queued(app, status=status)

    def queued_urls(self, app: Flask, action: str | None = None) -> list[str]:
        return queued_urls(app, action)

    def deliver(self, app: Flask, limit: int | None = None) -> PassResult:
        return deliver(app, limit)

    def wait_for_tick(self, app: Flask, timeout: float = 10.0) -> bool:
        """Wait for the background tick the app's last responses woke (see :func:`.helpers.wait_for_tick`)."""
        return wait_for_tick(app, timeout)

    def reply(self, *replies: Reply | int) -> None:
        """Script the recorder's next answers (see :meth:`RecordingEndpoint.script`)."""
        self.endpoint.script(*replies)

    @property
    def requests(self) -> list[Received]:
        return self.endpoint.requests

    @property
    def sent_urls(self) -> list[str]:
        """Every URL the recorder received, in order."""
        return self.endpoint.urls

    def close(self) -> None:
        while self._undo:
            self._undo.pop()()
