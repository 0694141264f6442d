"""The typed row shapes of ``indexnow.models`` say what the tables hold.

A site owner's query on ``indexnow.models.ScheduleRun.created_at`` type-checks only if the shape
names the column; a shape that says ``int`` where the column may be NULL lies to the type checker.
"""

from __future__ import annotations

import sqlalchemy as sa
from flask_sqlalchemy import SQLAlchemy

from flask_indexnow import models
from flask_indexnow.tables import build_tables

#: Models' field of each table → the shape its ORM class has.
SHAPES = {
    "queue": models.QueueRow,
    "history": models.HistoryRow,
    "schedule": models.ScheduleRow,
    "job": models.JobRow,
    "url_state": models.URLStateRow,
    "totals": models.TotalRow,
    "schedule_run": models.ScheduleRunRow,
    "inbox": models.InboxRow,
}


def _columns(shape: type) -> dict[str, str]:
    """The shape's column annotations (name → the annotation's text), its bases' included."""
    found: dict[str, str] = {}
    for klass in reversed(shape.__mro__):
        for name, annotation in vars(klass).get("__annotations__", {}).items():
            if str(annotation).startswith("Mapped["):
                found[name] = str(annotation)
    return found


def test_every_shape_names_exactly_its_table_columns_and_their_nullability() -> None:
    tables = build_tables(sa.MetaData(), "shapes_")
    assert set(SHAPES) == set(tables._fields)
    for field, shape in SHAPES.items():
        table: sa.Table = getattr(tables, field)
        columns = _columns(shape)
        assert sorted(columns) == sorted(c.name for c in table.columns), shape.__name__
        for column in table.columns:
            says_nullable = "None" in columns[column.name]
            assert says_nullable == bool(column.nullable and not column.primary_key), (shape.__name__, column.name)


def test_the_mapped_classes_have_their_table() -> None:
    db = SQLAlchemy()
    built = models.get_models(db, "shapes_mapped_")
    assert built.ScheduleRun.__table__ is built.schedule_run
    assert built.Queue.__table__ is built.queue
    assert isinstance(built.ScheduleRun.created_at, sa.orm.InstrumentedAttribute)
