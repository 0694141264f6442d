"""What every local test server shares; it lives in :mod:`flask_indexnow.testing.recorder`.

Re-exported here so the test servers and the shipped recorder run on one base,
exercised by every test that starts a server.
"""

from __future__ import annotations

from flask_indexnow.testing.recorder import QuietHTTPServer, ServerThread, reset_connection

__all__ = ["QuietHTTPServer", "ServerThread", "reset_connection"]
