"""Small portable SQL helpers shared by the queue, the worker and the scheduler."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.mysql import insert as mysql_insert
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

#: Rows per multi-row INSERT or upsert statement (the queue, history and ledger writes).
ROWS_PER_STATEMENT = 500
#: Values per ``IN (…)`` list: databases cap the bound parameters of one statement.
IN_LIST_SIZE = 1000


def dialect_name(executor: Any) -> str:
    """The dialect of a Session, Connection or Engine ("postgresql", "mysql", …)."""
    bind = executor.get_bind() if hasattr(executor, "get_bind") else executor
    name: str = bind.dialect.name
    return "mysql" if name == "mariadb" else name


def quoted_table(dialect: Any, table: sa.Table) -> str:
    """``table``'s name as raw SQL must write it on ``dialect`` (a SQLAlchemy Dialect, or a
    Session, Connection or Engine): quoted where the database would otherwise fold or refuse it.

    The ORM quotes names itself; raw SQL does not. On PostgreSQL an unquoted
    ``Site_indexnow_queue`` is the table ``site_indexnow_queue``, which does not
    exist: every statement written by hand takes its table names from here.
    """
    if not isinstance(dialect, sa.engine.Dialect):
        bind = dialect.get_bind() if hasattr(dialect, "get_bind") else dialect
        dialect = bind.dialect
    return str(dialect.identifier_preparer.format_table(table))


def upsert(
    executor: Any,
    table: sa.Table,
    rows: Sequence[dict[str, Any]],
    keys: Sequence[str],
    update: Sequence[str],
) -> None:
    """Insert ``rows``, or update ``update`` columns where ``keys`` already exist.

    One statement for the whole list on PostgreSQL, SQLite and MySQL/MariaDB
    (the driver batches the rows); ``keys`` must be covered by a unique
    constraint. Callers keep lists short enough for the database's parameter
    limit.
    """
    if not rows:
        return
    dialect = dialect_name(executor)
    if dialect in ("postgresql", "sqlite", "mysql"):
        executor.execute(_upsert_statement(table, dialect, tuple(keys), tuple(update)), list(rows))
        return
    for row in rows:  # portable fallback: UPDATE, then INSERT where nothing matched
        matched = executor.execute(
            sa.update(table)
            .where(*(table.c[k] == row[k] for k in keys))
            .values({name: row[name] for name in update})
        ).rowcount
        if not matched:
            executor.execute(sa.insert(table).values(row))


@functools.lru_cache(maxsize=256)
def _upsert_statement(table: sa.Table, dialect: str, keys: tuple[str, ...], update: tuple[str, ...]) -> Any:
    """The "insert or update" of ``table``, built once: building it (the ``excluded``
    alias above all) costs more than running it for one row, and a statement
    without inline values is compiled once and cached by SQLAlchemy."""
    stmt: Any
    if dialect == "mysql":
        stmt = mysql_insert(table)
        return stmt.on_duplicate_key_update({name: stmt.inserted[name] for name in update})
    stmt = (postgresql_insert if dialect == "postgresql" else sqlite_insert)(table)
    return stmt.on_conflict_do_update(
        index_elements=[table.c[k] for k in keys],
        set_={name: stmt.excluded[name] for name in update},
    )


def chunks(items: Sequence[Any], size: int) -> list[Sequence[Any]]:
    return [items[start : start + size] for start in range(0, len(items), size)]


def driver_error(exc: BaseException) -> Any:
    """The driver's own exception behind a SQLAlchemy error (``exc`` itself when there is none)."""
    return exc.orig if isinstance(exc, sa.exc.DBAPIError) else exc


def error_codes(exc: BaseException) -> tuple[str | None, int | None]:
    """The codes a database gave ``exc``: (PostgreSQL SQLSTATE, MySQL/MariaDB error number)."""
    orig = driver_error(exc)
    sqlstate = getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)  # psycopg 3 / psycopg2
    args: tuple[Any, ...] = tuple(getattr(orig, "args", ()) or ())
    number = args[0] if args and isinstance(args[0], int) else None
    return sqlstate, number


def error_text(exc: BaseException) -> str:
    """The first line of what the database said (the driver's message, not SQLAlchemy's wrapper)."""
    text = str(getattr(exc, "orig", None) or exc).strip()
    return (text.splitlines() or [type(exc).__name__])[0]
