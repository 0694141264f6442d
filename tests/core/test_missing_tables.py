"""Tables never created: one clear line on every surface, on every database.

Each test uses a table prefix of its own run whose tables were never made, so
the shared servers really have no such tables.
"""

from __future__ import annotations

import logging
import uuid

import pytest
import sqlalchemy as sa
from flask import Flask
from flask_sqlalchemy import SQLAlchemy

from flask_indexnow import IndexNow, IndexNowError, TablesMissingError
from flask_indexnow.missing import is_missing_table
from flask_indexnow.testing import wait_for_tick

from ..conftest import RUN_PREFIX, AppFactory

pytestmark = pytest.mark.every_backend  # each driver words a missing table its own way

HINT = "run `flask indexnow init-db`"


def never_created() -> str:
    return f"{RUN_PREFIX}never{uuid.uuid4().hex[:4]}_"


@pytest.fixture
def bare(make_app: AppFactory) -> Flask:
    return make_app(create_tables=False, INDEXNOW_TABLE_PREFIX=never_created())


def one_line(text: str) -> None:
    assert "tables are missing" in text and HINT in text, text
    assert "Traceback" not in text and "sqlalchemy" not in text.lower(), text


def no_tracebacks(caplog: pytest.LogCaptureFixture) -> None:
    assert [r for r in caplog.records if r.exc_info] == [], caplog.text


def test_enqueue_raises_the_documented_error(bare: Flask, caplog: pytest.LogCaptureFixture) -> None:
    ext = bare.extensions["indexnow"].extension
    with bare.app_context():
        with pytest.raises(TablesMissingError) as raised:
            ext.enqueue("https://example.com/a")
        one_line(str(raised.value))
        assert isinstance(raised.value, IndexNowError)
        with pytest.raises(TablesMissingError):
            ext.enqueue_many(["https://example.com/a", "https://example.com/b"])
    no_tracebacks(caplog)


def test_a_watched_save_logs_one_line_and_commits(make_app: AppFactory, caplog: pytest.LogCaptureFixture) -> None:
    db = SQLAlchemy()

    class Post(db.Model):  # type: ignore[name-defined]
        __tablename__ = f"{RUN_PREFIX}missing_posts_{uuid.uuid4().hex[:4]}"
        id = sa.Column(sa.Integer, primary_key=True)
        slug = sa.Column(sa.String(50), nullable=False)

    ext = IndexNow()
    ext.watch(Post, url=lambda p: f"https://example.com/{p.slug}")
    app = make_app(db=db, indexnow=ext, create_tables=False, INDEXNOW_TABLE_PREFIX=never_created())
    with app.app_context():
        Post.__table__.create(db.engine)
        try:
            with caplog.at_level(logging.INFO, logger="flask_indexnow"):
                db.session.add(Post(slug="kept"))
                db.session.commit()
            assert db.session.scalars(sa.select(Post.slug)).all() == ["kept"]
            mine = [r for r in caplog.records if r.name.startswith("flask_indexnow")]
            assert len(mine) == 1, caplog.text
            one_line(mine[0].getMessage())
            no_tracebacks(caplog)
        finally:
            db.session.rollback()
            Post.__table__.drop(db.engine)


def test_status_prints_one_line(bare: Flask, caplog: pytest.LogCaptureFixture) -> None:
    result = bare.test_cli_runner().invoke(args=["indexnow", "status"])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    one_line(lines[0])
    no_tracebacks(caplog)


@pytest.mark.parametrize("once", [False, True])
def test_work_exits_1_with_the_same_line(bare: Flask, caplog: pytest.LogCaptureFixture, once: bool) -> None:
    """No "reconnecting" loop: reconnecting never creates tables."""
    args = ["indexnow", "work", "--sleep", "0"] + (["--once"] if once else [])
    result = bare.test_cli_runner().invoke(args=args)
    assert result.exit_code == 1, result.output
    assert result.output.strip().splitlines()[-1].startswith("Error: ")
    one_line(result.output.strip().splitlines()[-1])
    assert "reconnecting" not in caplog.text
    no_tracebacks(caplog)


def test_other_database_errors_are_not_taken_for_missing_tables(make_app: AppFactory) -> None:
    app = make_app(create_tables=False)
    with app.app_context():
        engine = app.extensions["indexnow"].engine()
        with pytest.raises(sa.exc.DBAPIError) as raised, engine.connect() as connection:
            connection.execute(sa.text("SELECT no_such_column FROM (SELECT 1 AS x) AS t"))
        assert not is_missing_table(raised.value)
        with pytest.raises(sa.exc.DBAPIError) as raised, engine.connect() as connection:
            connection.execute(sa.text(f"SELECT 1 FROM {never_created()}queue"))
        assert is_missing_table(raised.value)


def test_the_after_response_tick_logs_one_line(bare: Flask, caplog: pytest.LogCaptureFixture) -> None:
    bare.add_url_rule("/", "home", lambda: "hello")
    with caplog.at_level(logging.INFO, logger="flask_indexnow"):
        response = bare.test_client().get("/")
        assert response.get_data(as_text=True) == "hello"
        response.close()  # the tick runs when the response is closed
        assert wait_for_tick(bare)
    mine = [r for r in caplog.records if r.name.startswith("flask_indexnow") and r.levelno >= logging.WARNING]
    assert len(mine) == 1, caplog.text
    one_line(mine[0].getMessage())
    no_tracebacks(caplog)
