"""The key file search engines fetch to verify a submission: ``GET /{key}.txt``."""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import Flask, Response, abort, request

from ..config import key_problem
from ..state import IndexNowState, get_state

DEFAULT_LOCATION = "https://{host}/{key}.txt"


def serves_key_file(state: IndexNowState) -> bool:
    """True when the key file is this host's ``/{key}.txt``, which the extension then serves.

    That is INDEXNOW_KEY_LOCATION unset, or a template that still names the
    request's own host and the root path (``http://{host}/{key}.txt`` too);
    any other location is served by someone else.
    """
    location = state.settings.key_location
    if location is None:
        return True
    parts = urlsplit(location)
    return parts.netloc == "{host}" and parts.path == "/{key}.txt" and not parts.query and not parts.fragment


def register_key_file(app: Flask, state: IndexNowState) -> None:
    """Add one exact route per configured key, so no other ``*.txt`` path is shadowed."""
    if not serves_key_file(state):
        return
    keys = {k for k in (state.settings.key, *state.settings.keys.values(), *state.settings.previous_keys)
            if k and not key_problem(k)}
    for key in sorted(keys):
        app.add_url_rule(
            f"/{key}.txt",
            endpoint=f"indexnow_key_file_{key}",
            view_func=serve_key_file,
            defaults={"requested": key},
        )


def serve_key_file(requested: str) -> Response:
    """Answer the key of the request's host (or a previous key), only for that key's own path.

    A previous key (INDEXNOW_PREVIOUS_KEYS) is still served on every host, so an
    engine checking a submission made before the rotation still finds it.
    """
    settings = get_state().settings
    try:
        host = (urlsplit("//" + request.host).hostname or "").rstrip(".")
    except ValueError:  # "[bad", "example.com:notaport": Werkzeug before 3.0 hands such a Host on as it came
        host = ""
    expected = settings.keys.get(host) or settings.key
    if requested != expected and requested not in settings.previous_keys:
        abort(404)
    response = Response(requested, mimetype="text/plain")
    response.headers["Content-Type"] = "text/plain; charset=utf-8"
    response.headers["X-Robots-Tag"] = "noindex"
    response.headers["Cache-Control"] = "public, max-age=3600"
    return response
