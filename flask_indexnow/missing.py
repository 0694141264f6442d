"""One place that recognises "the extension's tables are missing" and words it.

Every surface (``enqueue()``, a watched save, ``flask indexnow status``, the
worker) meets the same database error when the tables were never created; each
turns it into the same one line instead of a traceback or a retry loop.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from .errors import TablesMissingError

#: PostgreSQL's SQLSTATE for "relation does not exist".
_PG_UNDEFINED_TABLE = "42P01"
#: MySQL/MariaDB's error number for "Table '…' doesn't exist".
_MYSQL_NO_SUCH_TABLE = 1146


def is_missing_table(exc: BaseException) -> bool:
    """True when ``exc`` (or the driver error it wraps) says a table does not exist."""
    orig: Any = exc.orig if isinstance(exc, sa.exc.DBAPIError) else exc
    if orig is None:
        return False
    code = getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)  # psycopg 3 / psycopg2
    if code == _PG_UNDEFINED_TABLE:
        return True
    args = getattr(orig, "args", ())
    if args and args[0] == _MYSQL_NO_SUCH_TABLE:
        return True
    return type(orig).__module__ == "sqlite3" and "no such table" in str(orig)


def missing_tables_message(prefix: str = "") -> str:
    """The one line every surface prints."""
    where = f" (table prefix {prefix!r})" if prefix else ""
    return (
        f"the Flask-IndexNow tables are missing in this database{where}: "
        "run `flask indexnow init-db` (or apply your migration)"
    )


def tables_missing_error(prefix: str = "") -> TablesMissingError:
    return TablesMissingError(missing_tables_message(prefix))
