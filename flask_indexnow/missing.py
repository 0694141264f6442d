"""One place that recognises "the extension's tables are missing" and words it.

Every surface (``enqueue()``, a watched save, ``flask indexnow status``, the
worker) meets the same database error when the tables were never created; each
turns it into the same one line instead of a traceback or a retry loop.
"""

from __future__ import annotations

from .errors import TablesMissingError
from .sqlutil import driver_error, error_codes

#: PostgreSQL's SQLSTATE for "relation does not exist".
_PG_UNDEFINED_TABLE = "42P01"
#: MySQL/MariaDB's error number for "Table '…' doesn't exist".
_MYSQL_NO_SUCH_TABLE = 1146
#: "column does not exist": PostgreSQL's SQLSTATE, MySQL/MariaDB's "Unknown column".
_PG_UNDEFINED_COLUMN = "42703"
_MYSQL_UNKNOWN_COLUMN = 1054


def is_missing_table(exc: BaseException) -> bool:
    """True when ``exc`` (or the driver error it wraps) says a table does not exist."""
    orig = driver_error(exc)
    if orig is None:
        return False
    sqlstate, number = error_codes(exc)
    if sqlstate == _PG_UNDEFINED_TABLE or number == _MYSQL_NO_SUCH_TABLE:
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


def is_missing_column(exc: BaseException) -> bool:
    """True when ``exc`` says a column does not exist: tables made by an earlier release."""
    orig = driver_error(exc)
    if orig is None:
        return False
    sqlstate, number = error_codes(exc)
    if sqlstate == _PG_UNDEFINED_COLUMN or number == _MYSQL_UNKNOWN_COLUMN:
        return True
    return type(orig).__module__ == "sqlite3" and "no such column" in str(orig)


def outdated_tables_message(prefix: str = "") -> str:
    """The one line for tables that lack a column this release needs."""
    where = f" (table prefix {prefix!r})" if prefix else ""
    return (
        f"the Flask-IndexNow tables in this database{where} are older than this release: "
        "run `flask indexnow init-db` to bring them up to date (or generate and apply a migration)"
    )
