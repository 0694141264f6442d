"""Bringing tables made by an earlier release up to date (``flask indexnow init-db``).

``db.create_all()`` creates missing tables but never changes an existing one.
For a site without Flask-Migrate, ``init-db`` therefore also:

- adds the columns a table lacks (every column added since the first release
  is nullable or has a server default, so this is safe with rows present);
- creates the indexes and unique constraints it lacks;
- drops the unique constraint on ``indexnow_schedules.handler`` of releases
  before named schedules (a handler may now have several schedules). SQLite
  cannot drop a constraint, so there the table is rebuilt as SQLite's manual
  prescribes (new table, copy, drop, rename), in one transaction;
- names the schedules of those releases after their handler.

Each step looks first and does nothing when the database is already right,
so running it twice is harmless. Flask-Migrate users get the same from
``flask db migrate`` + ``upgrade``, except the SQLite constraint, which Alembic
cannot see (it has no name): ``init-db`` after the upgrade finishes it.
"""

from __future__ import annotations

import logging
from typing import Any

import sqlalchemy as sa

from .scheduling.schedules import fill_names
from .state import IndexNowState

logger = logging.getLogger(__name__)


def upgrade_tables(state: IndexNowState) -> list[str]:
    """Bring the extension's existing tables up to date; return what was done, one line each."""
    engine = state.engine()
    done: list[str] = []
    existing = set(sa.inspect(engine).get_table_names())
    schedules = state.models.schedule
    if schedules.name in existing and _handler_unique(engine, schedules) is not None:
        done.append(_drop_handler_unique(engine, schedules))
    for table in state.models.tables:
        if table.name in existing:
            done.extend(_add_missing(engine, table))
    if schedules.name in existing:
        with engine.begin() as connection:
            named = fill_names(connection, schedules)
        if named:
            done.append(f"{schedules.name}: named {named} schedule(s) after their handler")
    for line in done:
        logger.info("IndexNow: %s", line)
    return done


def _handler_unique(engine: sa.Engine, table: sa.Table) -> tuple[str, str | None] | None:
    """("constraint" | "index", its name) of a unique rule on ``handler`` alone, or None."""
    inspector = sa.inspect(engine)
    for constraint in inspector.get_unique_constraints(table.name):
        if constraint["column_names"] == ["handler"]:
            return "constraint", constraint.get("name")
    for index in inspector.get_indexes(table.name):
        if index.get("unique") and index["column_names"] == ["handler"]:
            return "index", index.get("name")
    return None


def _drop_handler_unique(engine: sa.Engine, table: sa.Table) -> str:
    kind, name = _handler_unique(engine, table) or ("", None)
    preparer = engine.dialect.identifier_preparer
    if engine.dialect.name == "sqlite" or name is None:
        _rebuild_sqlite(engine, table)
        return f"{table.name}: rebuilt without the unique constraint on handler (schedules are unique by name)"
    with engine.begin() as connection:
        if kind == "index":
            statement = f"DROP INDEX {preparer.quote(name)}"
            if engine.dialect.name in ("mysql", "mariadb"):
                statement += f" ON {preparer.format_table(table)}"
        elif engine.dialect.name in ("mysql", "mariadb"):
            statement = f"ALTER TABLE {preparer.format_table(table)} DROP INDEX {preparer.quote(name)}"
        else:
            statement = f"ALTER TABLE {preparer.format_table(table)} DROP CONSTRAINT {preparer.quote(name)}"
        connection.execute(sa.text(statement))
    return f"{table.name}: dropped the unique {kind} {name} on handler (schedules are unique by name)"


def _rebuild_sqlite(engine: sa.Engine, table: sa.Table) -> None:
    """SQLite's way to change a constraint: a new table, the rows copied, the old one dropped."""
    inspector = sa.inspect(engine)
    old_columns = {c["name"] for c in inspector.get_columns(table.name)}
    old_indexes = [i["name"] for i in inspector.get_indexes(table.name)
                   if i.get("name") and not str(i["name"]).startswith("sqlite_autoindex")]
    preparer = engine.dialect.identifier_preparer
    old_name = f"{table.name}__before_upgrade"
    shared = [c.name for c in table.columns if c.name in old_columns]
    columns = ", ".join(preparer.quote(name) for name in shared)
    with engine.begin() as connection:
        connection.exec_driver_sql(f"ALTER TABLE {preparer.quote(table.name)} RENAME TO {preparer.quote(old_name)}")
        for index in old_indexes:  # index names are the database's, not the table's: free them
            connection.exec_driver_sql(f"DROP INDEX {preparer.quote(str(index))}")
        table.create(connection)
        connection.exec_driver_sql(
            f"INSERT INTO {preparer.quote(table.name)} ({columns}) SELECT {columns} FROM {preparer.quote(old_name)}"
        )
        connection.exec_driver_sql(f"DROP TABLE {preparer.quote(old_name)}")


def _add_missing(engine: sa.Engine, table: sa.Table) -> list[str]:
    """ADD COLUMN for each column the table lacks, then CREATE the indexes and unique constraints it lacks."""
    inspector = sa.inspect(engine)
    have = {c["name"] for c in inspector.get_columns(table.name)}
    done: list[str] = []
    preparer = engine.dialect.identifier_preparer
    missing = [c for c in table.columns if c.name not in have]
    with engine.begin() as connection:
        for column in missing:
            ddl = sa.schema.CreateColumn(column).compile(dialect=engine.dialect)
            connection.execute(sa.text(f"ALTER TABLE {preparer.format_table(table)} ADD COLUMN {ddl}"))
        if missing:
            done.append(f"{table.name}: added column(s) {', '.join(c.name for c in missing)}")
    inspector = sa.inspect(engine)
    indexes = {i["name"] for i in inspector.get_indexes(table.name)}
    uniques = {u["name"] for u in inspector.get_unique_constraints(table.name)} | indexes
    with engine.begin() as connection:
        for index in table.indexes:
            if index.name not in indexes:
                index.create(connection)
                done.append(f"{table.name}: created index {index.name}")
        for constraint in table.constraints:
            if isinstance(constraint, sa.UniqueConstraint) and constraint.name and constraint.name not in uniques:
                _add_unique(connection, engine, constraint)
                done.append(f"{table.name}: created unique constraint {constraint.name}")
    return done


def _add_unique(connection: Any, engine: sa.Engine, constraint: sa.UniqueConstraint) -> None:
    if engine.dialect.name == "sqlite":  # no ALTER TABLE … ADD CONSTRAINT: a unique index is the same rule
        quote = engine.dialect.identifier_preparer.quote
        columns = ", ".join(quote(c.name) for c in constraint.columns)
        connection.exec_driver_sql(
            f"CREATE UNIQUE INDEX {quote(str(constraint.name))} ON {quote(constraint.table.name)} ({columns})")
        return
    connection.execute(sa.schema.AddConstraint(constraint))
