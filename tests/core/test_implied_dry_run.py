"""An app's own tests never reach a real engine (issue 19.4): app.testing / app.debug imply a dry run.

Only when neither an endpoint nor INDEXNOW_DRY_RUN is given explicitly: the suite's
own apps (tests/conftest.py) set INDEXNOW_ENDPOINT and keep sending to their local servers.
A test here that sent anyway would reach the default endpoint, a real engine: the
network guard (tests/network_guard.py) refuses that and fails the test.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from flask import Flask
from flask_sqlalchemy import SQLAlchemy

from flask_indexnow import IndexNow
from flask_indexnow.testing import RecordingEndpoint
from flask_indexnow.testing.helpers import point_app_at

from ..conftest import KEY

URL = "https://example.com/page"


def site_app(tmp_path, **config: Any) -> Flask:
    """An app as a site owner writes it: no endpoint setting, the suite's conftest not involved."""
    app = Flask("site")
    app.config.update(SQLALCHEMY_DATABASE_URI=f"sqlite:///{tmp_path / 'site.db'}", INDEXNOW_KEY=KEY,
                      INDEXNOW_ALLOWED_HOSTS=["example.com"], SECRET_KEY="s")
    app.config.update(config)
    db = SQLAlchemy(app)
    IndexNow(app, db=db)
    with app.app_context():
        db.create_all()
    return app


def ext(app: Flask) -> IndexNow:
    return app.extensions["indexnow"].extension  # type: ignore[no-any-return]


def checks(app: Flask) -> dict[str, dict[str, Any]]:
    with app.app_context():
        from flask_indexnow.stats import collect_status

        data = collect_status(app.extensions["indexnow"], scheduler_active=True)
    return {c["name"]: c for c in data["checks"]} | {"_doc": data}


@pytest.mark.parametrize(("flag", "reason"), [("TESTING", "app.testing is True"), ("DEBUG", "app.debug is True")])
def test_testing_or_debug_without_an_endpoint_is_a_dry_run_said_once(tmp_path, caplog, clock, flag, reason):
    caplog.set_level(logging.INFO, logger="flask_indexnow")
    app = site_app(tmp_path, **{flag: True})
    lines = [r.getMessage() for r in caplog.records if "dry run, because" in r.getMessage()]
    assert len(lines) == 1 and reason in lines[0] and "INDEXNOW_DRY_RUN = False" in lines[0]
    with app.app_context():
        ext(app).enqueue(URL)
        result = ext(app).process_queue()
        ext(app).enqueue(URL + "2")
        ext(app).process_queue()
    assert (result.dry_run, result.succeeded, result.requests) == (1, 0, 0)
    assert len([r for r in caplog.records if "dry run, because" in r.getMessage()]) == 1  # once, not per pass
    found = checks(app)
    assert found["_doc"]["dry_run"] is True and found["_doc"]["dry_run_reason"] == reason
    assert reason in found["dry_run"]["message"] and "INDEXNOW_DRY_RUN = False" in found["dry_run"]["fix"]
    cli = app.test_cli_runner().invoke(args=["indexnow", "status"])
    assert reason in cli.output
    page = app.test_client()
    app.extensions["indexnow"].extension.status_auth(lambda: True)
    assert reason in page.get("/indexnow/").get_data(as_text=True)


@pytest.mark.parametrize("config", [
    {"TESTING": True, "INDEXNOW_DRY_RUN": False},
    {"DEBUG": True, "INDEXNOW_ENDPOINT": "https://yandex.com/indexnow"},
    {"TESTING": True, "INDEXNOW_ENDPOINTS": ["https://yandex.com/indexnow", "https://www.bing.com/indexnow"]},
    {},
])
def test_an_explicit_setting_or_a_production_app_still_sends(tmp_path, config):
    app = site_app(tmp_path, **config)
    settings = app.extensions["indexnow"].settings
    assert (settings.dry_run, settings.implied_dry_run) == (False, None)
    # Listed as passing (a scraper exports every check as 0/1), never as a dry run.
    found = checks(app)["dry_run"]
    assert (found["ok"], found["message"]) == (True, "Not a dry run: deliveries are sent.")


def test_explicit_dry_run_is_said_as_before(tmp_path):
    app = site_app(tmp_path, TESTING=True, INDEXNOW_DRY_RUN=True)
    assert app.extensions["indexnow"].settings.implied_dry_run is None
    assert checks(app)["dry_run"]["message"] == "INDEXNOW_DRY_RUN is on: nothing is sent."


def test_pointing_the_app_at_a_recorder_ends_the_implied_dry_run(tmp_path, clock):
    app = site_app(tmp_path, TESTING=True)
    with RecordingEndpoint() as recorder:
        undo = point_app_at(app, recorder)
        with app.app_context():
            ext(app).enqueue(URL)
            assert ext(app).process_queue().succeeded == 1
        assert recorder.urls_received() == [URL]
        undo()
    assert app.extensions["indexnow"].settings.dry_run is True
