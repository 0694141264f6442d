"""Exceptions a caller may catch."""

from __future__ import annotations


class IndexNowError(Exception):
    """Base class of the extension's own errors."""


class InvalidURLError(IndexNowError, ValueError):
    """A URL that may not be submitted: bad scheme, private host, …"""


class ConfigurationError(IndexNowError, ValueError):
    """An ``INDEXNOW_*`` setting has a value of the wrong type or out of range."""
