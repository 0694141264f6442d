"""SPEC §13 metrics access: the status page's rule or a bearer token; 401/403 otherwise; 501 without the library.

Access does not depend on the database: SQLite proves it.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_openmetrics

from flask_indexnow.errors import ConfigurationError
from flask_indexnow.metrics import views

from .helpers import PREFIX, TOKEN, scrape

URL = PREFIX + "/metrics"


def allow(app, answer):
    app.extensions["indexnow"].extension.status_auth(lambda: answer)
    return app


def get(app, authorization: str | None = None, **headers: str):
    if authorization is not None:
        headers["Authorization"] = authorization
    return app.test_client().get(URL, headers=headers)


def test_closed_without_hook_or_token(make_app):
    response = get(make_app())
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith("Bearer")
    assert response.headers["Cache-Control"] == "no-store"
    assert b"indexnow_" not in response.data


@pytest.mark.parametrize("answer", [False, None, 1, "yes"])
def test_a_hook_that_does_not_say_true_keeps_it_closed(make_app, answer):
    app = allow(make_app(), answer)
    assert get(app).status_code == 401  # no credentials sent
    assert get(app, "Bearer whatever-it-may-be-123").status_code == 403  # credentials, wrong ones


def test_the_status_page_rule_opens_it(make_app):
    app = allow(make_app(), True)
    response = get(app)
    assert response.status_code == 200
    assert response.headers["Cache-Control"] == "no-store"
    assert response.content_type.startswith("text/plain; version=")
    assert "indexnow_deliveries_total" in response.get_data(as_text=True)


def test_the_token_opens_it_without_the_hook(make_app):
    app = make_app(INDEXNOW_METRICS_TOKEN=TOKEN)
    assert scrape(app)  # Authorization: Bearer <token>, parsed by prometheus_client
    assert get(app, f"bearer {TOKEN}").status_code == 200  # the scheme is case-insensitive
    for wrong in (f"Bearer {TOKEN}x", f"Bearer {TOKEN[:-1]}", "Bearer", f"Basic {TOKEN}", TOKEN):
        response = get(app, wrong)
        assert response.status_code == 403, wrong
        assert response.headers["Cache-Control"] == "no-store"
        assert b"indexnow_" not in response.data
    assert get(app).status_code == 401


def test_a_refusing_hook_does_not_close_it_to_the_token(make_app):
    app = allow(make_app(INDEXNOW_METRICS_TOKEN=TOKEN), False)
    assert get(app, f"Bearer {TOKEN}").status_code == 200
    assert get(app, "Bearer another-token-0000000").status_code == 403


def test_the_token_does_not_open_the_status_page(make_app):
    app = make_app(INDEXNOW_METRICS_TOKEN=TOKEN)
    response = app.test_client().get(PREFIX + "/status.json", headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 403


def test_openmetrics_when_the_scraper_asks_for_it(make_app):
    app = make_app(INDEXNOW_METRICS_TOKEN=TOKEN)
    response = get(app, f"Bearer {TOKEN}", Accept="application/openmetrics-text; version=1.0.0")
    assert response.status_code == 200
    assert response.content_type.startswith("application/openmetrics-text")
    names = {family.name for family in parse_openmetrics(response.get_data(as_text=True))}
    assert {"indexnow_deliveries", "indexnow_queue_urls", "indexnow_check_ok"} <= names


def test_501_without_prometheus_client(make_app, monkeypatch):
    """A real request to the route in a process where ``import prometheus_client`` fails."""
    app = make_app(INDEXNOW_METRICS_TOKEN=TOKEN)
    for name in [m for m in sys.modules if m == "prometheus_client" or m.startswith("prometheus_client.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "prometheus_client", None)  # None in sys.modules: ImportError
    monkeypatch.delitem(sys.modules, "flask_indexnow.metrics.collector", raising=False)
    response = get(app, f"Bearer {TOKEN}")
    assert response.status_code == 501
    assert response.get_data(as_text=True) == (
        "Prometheus metrics need the prometheus_client library: pip install 'flask-indexnow[metrics]'\n")
    assert response.headers["Cache-Control"] == "no-store"
    assert get(app).status_code == 401  # access is decided first: the 501 tells no stranger anything


@pytest.mark.parametrize("token", ["short", "with a space in it!!", 1234567890123456789, b"bytes-token-000000000", ""])
def test_a_bad_token_fails_at_init_naming_the_setting(make_app, token):
    with pytest.raises(ConfigurationError, match="INDEXNOW_METRICS_TOKEN") as caught:
        make_app(INDEXNOW_METRICS_TOKEN=token)
    if isinstance(token, str) and token:
        assert token not in str(caught.value)  # a secret is never echoed


def test_no_route_without_a_status_prefix(make_app):
    app = make_app(INDEXNOW_METRICS_TOKEN=TOKEN, INDEXNOW_STATUS_URL_PREFIX=None)
    assert get(app, f"Bearer {TOKEN}").status_code == 404


def test_the_route_follows_the_status_prefix(make_app):
    app = make_app(INDEXNOW_METRICS_TOKEN=TOKEN, INDEXNOW_STATUS_URL_PREFIX="/admin/indexnow")
    response = app.test_client().get("/admin/indexnow/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 200


def test_the_token_is_compared_in_constant_time(make_app, monkeypatch):
    """The route hands the token to hmac.compare_digest (an ``==`` would time out how much of it matched)."""
    calls: list[tuple[bytes, bytes]] = []
    real = views.hmac.compare_digest

    def recording(a, b):
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(views.hmac, "compare_digest", recording)
    app = make_app(INDEXNOW_METRICS_TOKEN=TOKEN)
    assert get(app, f"Bearer {TOKEN}").status_code == 200
    assert get(app, f"Bearer {TOKEN[:-1]}x").status_code == 403
    assert calls == [(TOKEN.encode(), TOKEN.encode()), ((TOKEN[:-1] + "x").encode(), TOKEN.encode())]


#: A process in which prometheus_client can never be imported, from its first line: the site without the extra.
WITHOUT_PROMETHEUS = textwrap.dedent("""
    import importlib.abc, json, sys

    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name == "prometheus_client" or name.startswith("prometheus_client."):
                raise ModuleNotFoundError(f"No module named {name!r}")

    sys.meta_path.insert(0, Block())
    from flask import Flask
    from flask_sqlalchemy import SQLAlchemy
    from flask_indexnow import IndexNow

    app = Flask("noprom")
    app.config.update(SQLALCHEMY_DATABASE_URI=sys.argv[1], INDEXNOW_KEY="3f1c0d7e8a9b4c5d",
                      INDEXNOW_ALLOWED_HOSTS=["example.com"], INDEXNOW_METRICS_TOKEN=sys.argv[2],
                      INDEXNOW_ENDPOINT="http://127.0.0.1:9/indexnow", INDEXNOW_ALLOW_PRIVATE_ENDPOINT=True)
    db = SQLAlchemy(app)
    IndexNow(app, db=db)
    with app.app_context():
        db.create_all()
    client = app.test_client()
    answers = [client.get("/indexnow/metrics", headers={"Authorization": f"Bearer {sys.argv[2]}"}),
               client.get("/indexnow/metrics")]
    print(json.dumps({
        "answers": [[r.status_code, r.get_data(as_text=True), r.headers.get("Cache-Control")] for r in answers],
        "imported": sorted(m for m in sys.modules if m.startswith("prometheus_client")),
    }))
""")


def test_501_in_a_process_that_never_had_prometheus_client(tmp_path):
    """The extra not installed at all: the app builds, the route answers 501 naming what to install."""
    import json

    done = subprocess.run([sys.executable, "-c", WITHOUT_PROMETHEUS, f"sqlite:///{tmp_path / 'site.db'}", TOKEN],
                          capture_output=True, text=True, timeout=120, cwd=Path(__file__).parents[2])
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    with_token, without = found["answers"]
    assert with_token == [501, views.MISSING_LIBRARY, "no-store"]
    assert views.MISSING_LIBRARY.count("\n") == 1 and "pip install 'flask-indexnow[metrics]'" in with_token[1]
    assert without[0] == 401 and without[2] == "no-store"  # access first: a stranger learns nothing
    assert found["imported"] == []


def test_503_when_the_database_does_not_answer(make_app, caplog):
    """A real database URL nobody listens on (a closed loopback port): 503, no traceback, never cached."""
    app = make_app(INDEXNOW_METRICS_TOKEN=TOKEN, create_tables=False,
                   SQLALCHEMY_DATABASE_URI="postgresql+psycopg://postgres@127.0.0.1:9/test",
                   SQLALCHEMY_ENGINE_OPTIONS={"connect_args": {"connect_timeout": 5}})
    response = get(app, f"Bearer {TOKEN}")
    body = response.get_data(as_text=True)
    assert response.status_code == 503, body
    assert body.startswith("The database could not be read: ")
    assert "Traceback" not in body and 'File "' not in body
    assert response.headers["Cache-Control"] == "no-store"
    assert "indexnow_" not in body
    assert "IndexNow metrics: database error" in caplog.text  # the operator's log has the details
