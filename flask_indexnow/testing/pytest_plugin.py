"""pytest fixtures for the tests of a site that uses Flask-IndexNow.

Installed with the package, pytest loads this plugin by itself (entry point
``indexnow`` in the ``pytest11`` group). It has no autouse fixture and no
hook: nothing happens in a test that does not ask for one of its fixtures.
``-p no:indexnow`` switches it off altogether.

- ``indexnow_endpoint``: a started :class:`~flask_indexnow.testing.RecordingEndpoint`.
- ``indexnow_config``: the config that aims an app at it, for an app factory.
- ``indexnow``: an :class:`~flask_indexnow.testing.harness.IndexNowHarness`
  (``use(app)``, ``queued_urls(app)``, ``deliver(app)``, ``sent_urls`` …).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from .harness import IndexNowHarness
from .helpers import endpoint_config
from .recorder import RecordingEndpoint


@pytest.fixture
def indexnow_endpoint() -> Iterator[RecordingEndpoint]:
    """A local IndexNow endpoint on 127.0.0.1 that records every POST (200 unless scripted)."""
    with RecordingEndpoint() as endpoint:
        yield endpoint


@pytest.fixture
def indexnow_config(indexnow_endpoint: RecordingEndpoint) -> dict[str, Any]:
    """``{"INDEXNOW_ENDPOINT": <recorder>, "INDEXNOW_ALLOW_PRIVATE_ENDPOINT": True}`` for an app factory."""
    return endpoint_config(indexnow_endpoint)


@pytest.fixture
def indexnow(indexnow_endpoint: RecordingEndpoint) -> Iterator[IndexNowHarness]:
    """The recorder with helpers to aim apps at it, read their queue and deliver."""
    harness = IndexNowHarness(indexnow_endpoint)
    yield harness
    harness.close()
