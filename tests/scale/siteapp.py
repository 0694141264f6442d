"""The site that the scale tests run in other processes.

``flask --app "tests.scale.siteapp:create_app()" indexnow work`` builds it from
the JSON in ``INDEXNOW_SCALE_CONFIG`` (the test copies its own app's database
URL, table prefix, endpoint and cache settings there), so worker processes
share the test's tables exactly as workers on other machines would.
"""

from __future__ import annotations

import json
import os

from flask import Flask
from flask_sqlalchemy import SQLAlchemy

from flask_indexnow import IndexNow

from .. import network_guard

CONFIG_ENV = "INDEXNOW_SCALE_CONFIG"


def create_app() -> Flask:
    network_guard.install()  # this process, too, talks only to loopback
    app = Flask("scale_site")
    app.config.update(json.loads(os.environ[CONFIG_ENV]))
    db = SQLAlchemy()
    db.init_app(app)
    IndexNow(app, db=db)
    app.add_url_rule("/", "home", lambda: "hello")
    return app
