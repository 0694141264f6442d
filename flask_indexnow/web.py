"""Everything the extension adds to the app's URL map."""

from __future__ import annotations

from flask import Flask

from .keyfile import register_key_file
from .state import IndexNowState


def register_web(app: Flask, state: IndexNowState) -> None:
    register_key_file(app, state)
    if state.settings.status_url_prefix is not None:
        from .status import create_blueprint

        app.register_blueprint(create_blueprint(), url_prefix=state.settings.status_url_prefix)
