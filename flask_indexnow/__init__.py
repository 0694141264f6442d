"""Flask-IndexNow: tell search engines which pages changed, through IndexNow."""

from __future__ import annotations

from . import signals
from .delivery.worker import PassResult
from .errors import ConfigurationError, IndexNowError, InvalidURLError, TablesMissingError
from .extension import IndexNow, IndexNowWarning
from .queue import EnqueueResult
from .scheduling import OverlapPolicy
from .version import __version__

__all__ = [
    "ConfigurationError",
    "EnqueueResult",
    "IndexNow",
    "IndexNowError",
    "IndexNowWarning",
    "InvalidURLError",
    "OverlapPolicy",
    "PassResult",
    "TablesMissingError",
    "__version__",
    "signals",
]
