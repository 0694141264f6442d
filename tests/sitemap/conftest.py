from __future__ import annotations

from collections.abc import Iterator

import pytest

from ..file_server import FileServer


@pytest.fixture
def files() -> Iterator[FileServer]:
    """A real HTTP server on 127.0.0.1 serving scripted sitemap files."""
    server = FileServer().start()
    yield server
    server.stop()
