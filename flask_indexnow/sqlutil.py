"""Small portable SQL helpers shared by the queue, the worker and the scheduler."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa


def dialect_name(executor: Any) -> str:
    """The dialect of a Session, Connection or Engine ("postgresql", "mysql", …)."""
    bind = executor.get_bind() if hasattr(executor, "get_bind") else executor
    name: str = bind.dialect.name
    return "mysql" if name == "mariadb" else name


def upsert(
    executor: Any,
    table: sa.Table,
    rows: Sequence[dict[str, Any]],
    keys: Sequence[str],
    update: Sequence[str],
) -> None:
    """Insert ``rows``, or update ``update`` columns where ``keys`` already exist.

    One statement, run as an executemany over the whole list, on PostgreSQL,
    SQLite and MySQL/MariaDB; ``keys`` must be covered by a unique constraint
    and every row must have the same keys. The statement is compiled once and
    the driver sends the rows in multi-row batches (a ``.values(rows)``
    statement would compile one bind parameter per value: six times slower for
    10,000 rows).
    """
    if not rows:
        return
    dialect = dialect_name(executor)
    stmt: Any
    if dialect in ("postgresql", "sqlite"):
        if dialect == "postgresql":
            from sqlalchemy.dialects.postgresql import insert
        else:
            from sqlalchemy.dialects.sqlite import insert  # type: ignore[assignment]
        stmt = insert(table)
        stmt = stmt.on_conflict_do_update(
            index_elements=[table.c[k] for k in keys],
            set_={name: stmt.excluded[name] for name in update},
        )
        executor.execute(stmt, list(rows))
    elif dialect == "mysql":
        from sqlalchemy.dialects.mysql import insert as mysql_insert

        stmt = mysql_insert(table)
        stmt = stmt.on_duplicate_key_update({name: stmt.inserted[name] for name in update})
        executor.execute(stmt, list(rows))
    else:  # portable fallback: UPDATE, then INSERT where nothing matched
        for row in rows:
            matched = executor.execute(
                sa.update(table)
                .where(*(table.c[k] == row[k] for k in keys))
                .values({name: row[name] for name in update})
            ).rowcount
            if not matched:
                executor.execute(sa.insert(table).values(row))


def chunks(items: Sequence[Any], size: int) -> list[Sequence[Any]]:
    return [items[start : start + size] for start in range(0, len(items), size)]
