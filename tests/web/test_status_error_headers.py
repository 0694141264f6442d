"""404 and 405 answers under the status prefix carry the page's security headers.

They fail in routing, before Flask knows the blueprint, so the blueprint's own
hook never sees them. The headers do not depend on the database: SQLite only.
"""

from __future__ import annotations

import pytest
from flask import Flask

from flask_indexnow.status.views import SECURITY_HEADERS

from .conftest import PREFIX


def assert_secured(response) -> None:
    for name, value in SECURITY_HEADERS.items():
        assert response.headers.get(name) == value, (response.status_code, name, dict(response.headers))


@pytest.mark.parametrize("path", ["/nothing-here", "/_static/missing.css", "/status.json/extra"])
def test_not_found_under_the_prefix(status_app: Flask, path: str) -> None:
    response = status_app.test_client().get(PREFIX + path)
    assert response.status_code == 404
    assert_secured(response)


@pytest.mark.parametrize(("method", "path"), [("get", "/process"), ("get", "/retry-failed"), ("post", "/"),
                                              ("delete", "/status.json")])
def test_method_not_allowed_under_the_prefix(status_app: Flask, method: str, path: str) -> None:
    response = getattr(status_app.test_client(), method)(PREFIX + path)
    assert response.status_code == 405
    assert_secured(response)


def test_the_rest_of_the_site_keeps_its_own_headers(status_app: Flask) -> None:
    """Only the status prefix: the host app's own 404s are its business."""
    for path in ("/elsewhere", PREFIX + "x/not-the-prefix"):
        response = status_app.test_client().get(path)
        assert response.status_code == 404
        assert "Content-Security-Policy" not in response.headers
