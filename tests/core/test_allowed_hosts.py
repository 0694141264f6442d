"""SPEC §11: INDEXNOW_ALLOWED_HOSTS — a forged Host header can never queue a foreign URL."""

from __future__ import annotations

import pytest
import requests
from flask import Flask, current_app, request

from flask_indexnow import InvalidURLError, signals

from ..conftest import rows
from ..live_server import serve


def site(app: Flask) -> Flask:
    @app.post("/save/<slug>")
    def save(slug: str) -> str:
        # The usual mistake: an absolute URL built from the request's Host header.
        url = f"{request.host_url}pages/{slug}"
        signals.resource_saved.send(current_app._get_current_object(), url=url, published=True)
        return url

    return app


@pytest.mark.parametrize(
    "config",
    [{"INDEXNOW_ALLOWED_HOSTS": ["www.example.com"]}, {"SERVER_NAME": "www.example.com"}],
    ids=["allowed-hosts", "server-name"],
)
# Werkzeug before 3.0 warns about the forged name when it binds the URL map; it is the forgery under test.
@pytest.mark.filterwarnings("ignore:Current server name:UserWarning")
def test_forged_host_header_queues_nothing(make_app, config) -> None:
    app = site(make_app(**config))
    with serve(app) as base:
        good = requests.post(base + "/save/a", headers={"Host": "www.example.com"}, timeout=10)
        forged = requests.post(base + "/save/b", headers={"Host": "evil.example.net"}, timeout=10)
    assert good.status_code == 200
    assert forged.status_code in (200, 404)  # with SERVER_NAME, Flask may not even route it
    assert [r.url for r in rows(app)] == ["http://www.example.com/pages/a"]


def test_direct_api_refuses_other_hosts(make_app) -> None:
    app = make_app(INDEXNOW_ALLOWED_HOSTS=["example.com", "www.example.com"])
    with app.app_context():
        ext = app.extensions["indexnow"].extension
        assert ext.enqueue("https://www.example.com/x")
        with pytest.raises(InvalidURLError, match="INDEXNOW_ALLOWED_HOSTS"):
            ext.enqueue("https://example.org/x")
        result = ext.enqueue_many(["https://example.com/1", "https://sub.example.com/2"])
        assert result.queued == 1 and result.rejected[0][0] == "https://sub.example.com/2"
    assert sorted(r.host for r in rows(app)) == ["example.com", "www.example.com"]


def test_any_public_host_with_star(make_app) -> None:
    app = make_app(INDEXNOW_ALLOWED_HOSTS="*")
    with app.app_context():
        ext = app.extensions["indexnow"].extension
        ext.enqueue("https://one.example.com/")
        ext.enqueue("https://two.example.org/")
    assert len(rows(app)) == 2
