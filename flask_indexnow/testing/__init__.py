"""Testing helpers for sites that use Flask-IndexNow.

- :class:`RecordingEndpoint`: a local IndexNow endpoint (127.0.0.1 only) that
  records every POST and answers scripted statuses and ``Retry-After`` headers.
- :func:`point_app_at`, :func:`queued_urls`, :func:`queued`, :func:`deliver`:
  aim an app at it, read what is queued, run a worker pass.
- :mod:`flask_indexnow.testing.pytest_plugin`: the same as pytest fixtures
  (``indexnow_endpoint``, ``indexnow_config``, ``indexnow``).
"""

from __future__ import annotations

from .harness import IndexNowHarness
from .helpers import QueuedURL, deliver, endpoint_config, point_app_at, queued, queued_urls, wait_for_tick
from .recorder import Received, RecordingEndpoint, Reply

__all__ = [
    "IndexNowHarness",
    "QueuedURL",
    "Received",
    "RecordingEndpoint",
    "Reply",
    "deliver",
    "endpoint_config",
    "point_app_at",
    "queued",
    "queued_urls",
    "wait_for_tick",
]
