"""Exceptions a caller may catch."""

from __future__ import annotations


class IndexNowError(Exception):
    """Base class of the extension's own errors."""


class InvalidURLError(IndexNowError, ValueError):
    """A URL that may not be submitted: bad scheme, private host, …"""


class ConfigurationError(IndexNowError, ValueError):
    """An ``INDEXNOW_*`` setting has a value of the wrong type or out of range."""


class TablesMissingError(IndexNowError, RuntimeError):
    """The extension's tables do not exist in the database (yet).

    Raised by :meth:`IndexNow.enqueue` and :meth:`IndexNow.enqueue_many`, and
    reported as one line by the CLI, the worker and the model watching. Create
    the tables with ``flask indexnow init-db``, ``db.create_all()`` or your
    Flask-Migrate migration.
    """
