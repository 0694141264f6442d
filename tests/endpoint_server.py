"""The ``endpoint`` fixture's server: the shipped recorder, :mod:`flask_indexnow.testing`.

Every delivery test runs against :class:`flask_indexnow.testing.RecordingEndpoint`
(scripted replies, delays, resets, redirects, garbage bodies), so the recorder
site owners use in their own tests is exercised by this project every day.
"""

from __future__ import annotations

from flask_indexnow.testing.recorder import Received, RecordingEndpoint, Reply

#: The name the project's tests have always used.
EndpointServer = RecordingEndpoint

__all__ = ["EndpointServer", "Received", "Reply"]
