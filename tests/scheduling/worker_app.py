"""A small app for worker processes started by the tests (subprocesses, multiprocessing).

Configured from the environment (or arguments), on the database and table
prefix of the test that starts it. Its handlers leave traces in files under
``INDEXNOW_TEST_MARKS`` so the test can see what ran, and where.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from flask import Flask
from flask_sqlalchemy import SQLAlchemy

from flask_indexnow import IndexNow

from .. import network_guard


def create_app(database_url: str | None = None, prefix: str | None = None, marks: str | None = None) -> Flask:
    network_guard.install()  # this process, too, talks only to loopback
    app = Flask("worker_app")
    app.config.update(
        SQLALCHEMY_DATABASE_URI=database_url or os.environ["INDEXNOW_TEST_DB_URL"],
        INDEXNOW_TABLE_PREFIX=prefix if prefix is not None else os.environ["INDEXNOW_TEST_PREFIX"],
        INDEXNOW_KEY="3f1c0d7e8a9b4c5d",
        # Nothing is sent anywhere: the URL queue stays empty in these tests.
        INDEXNOW_ENDPOINT="http://127.0.0.1:9/indexnow",
        INDEXNOW_ALLOW_PRIVATE_ENDPOINT=True,
        INDEXNOW_SCHEDULER_ENABLED=False,
    )
    marks_dir = Path(marks or os.environ.get("INDEXNOW_TEST_MARKS", "."))
    db = SQLAlchemy()
    db.init_app(app)
    ext = IndexNow()
    ext.init_app(app, db=db)

    @ext.job("slow")
    def slow(payload: Any) -> None:
        (marks_dir / f"started-{payload}").write_text(str(os.getpid()))
        time.sleep(1.0)
        (marks_dir / f"finished-{payload}").write_text(str(os.getpid()))

    @ext.job("record")
    def record(payload: Any) -> None:
        # A job takes a moment, as real ones do: one process cannot drain all
        # of them before the others, slower to connect, make their first claim.
        time.sleep(0.02)
        with open(marks_dir / "ran.txt", "a", encoding="utf-8") as out:
            out.write(f"{payload} {os.getpid()}\n")

    return app
