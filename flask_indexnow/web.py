"""Everything the extension adds to the app's URL map."""

from __future__ import annotations

from typing import Any

from flask import Flask, request

from .keys.keyfile import register_key_file
from .metrics.views import create_blueprint as create_metrics_blueprint
from .sitemap.serve import register_sitemap
from .state import IndexNowState
from .status import create_blueprint
from .status.views import add_security_headers


def register_web(app: Flask, state: IndexNowState) -> None:
    register_key_file(app, state)
    register_sitemap(app, state)
    if state.settings.status_url_prefix is not None:
        app.register_blueprint(create_blueprint(), url_prefix=state.settings.status_url_prefix)
        app.register_blueprint(create_metrics_blueprint(), url_prefix=state.settings.status_url_prefix)
        _secure_status_errors(app, state.settings.status_url_prefix)


def _secure_status_errors(app: Flask, prefix: str) -> None:
    """Give the 404 and 405 answers under the status prefix the page's security headers.

    A URL that matches no route (or the wrong method) fails in routing, before
    Flask knows the blueprint, so the blueprint's own ``after_request`` never
    sees it: the app-level hook below does, for that prefix only.
    """
    base = prefix.rstrip("/")
    if not base:  # the page at the site's root: the blueprint's hook covers its routes
        return

    @app.after_request
    def status_error_headers(response: Any) -> Any:
        if request.path == base or request.path.startswith(base + "/"):
            add_security_headers(response)
        return response
