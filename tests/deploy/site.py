"""The site each real server of tests/deploy serves, in its own process.

Built from the JSON in ``INDEXNOW_SCALE_CONFIG`` (as tests/scale/siteapp.py), so
the server's workers share the test's tables and endpoint. ``GET /`` is a page
view; ``POST /save`` queues the URL in its ``url`` form field, as a watched save
would; ``GET /ticker`` names what runs the tick. With ``INDEXNOW_DEPLOY_WARM_UP`` set, the app answers one request
before the server forks its workers (gunicorn ``--preload``): this process's
ticker thread is then running when the fork happens.
"""

from __future__ import annotations

import json
import os

from flask import Flask, request
from flask_sqlalchemy import SQLAlchemy

from flask_indexnow import IndexNow

from .. import network_guard
from ..scale.siteapp import CONFIG_ENV

WARM_UP_ENV = "INDEXNOW_DEPLOY_WARM_UP"


def create_app() -> Flask:
    network_guard.install()  # this process, too, talks only to loopback
    app = Flask("deploy_site")
    app.config.update(json.loads(os.environ[CONFIG_ENV]))
    db = SQLAlchemy()
    db.init_app(app)
    indexnow = IndexNow(app, db=db)
    app.add_url_rule("/", "home", lambda: "hello")

    @app.post("/save")
    def save() -> str:
        indexnow.enqueue(request.form["url"])
        return "saved"

    @app.get("/ticker")
    def ticker_kind() -> str:
        """What runs this worker's tick: Thread, or Greenlet under gevent (None: not started)."""
        ticker = app.extensions["indexnow"].ticker
        return type(ticker._worker).__name__ if ticker is not None else "no ticker"

    if os.environ.get(WARM_UP_ENV):
        with app.test_client() as client:
            client.post("/save", data={"url": os.environ[WARM_UP_ENV]}).close()
        ticker = app.extensions["indexnow"].ticker
        assert ticker is not None and ticker.running and ticker.wait_idle(30)
        with app.app_context():
            db.engine.dispose()  # no pooled connection shared with the forked workers (SQLAlchemy's advice)
    return app
