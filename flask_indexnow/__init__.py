"""Flask-IndexNow: tell search engines which pages changed, through IndexNow."""

from __future__ import annotations

from . import signals
from .delivery.worker import PassResult
from .errors import ConfigurationError, IndexNowError, InvalidURLError, TablesMissingError
from .extension import IndexNow, IndexNowWarning
from .queue import EnqueueResult
from .scheduling import OverlapPolicy

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
    "signals",
]
__version__ = "0.1.0.dev0"
