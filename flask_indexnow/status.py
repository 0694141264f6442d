"""Status blueprint (SPEC §8). Being built: see issue 4."""

from __future__ import annotations

from flask import Blueprint, abort


def create_blueprint() -> Blueprint:
    bp = Blueprint("indexnow", __name__, template_folder="templates")

    @bp.get("/")
    def index() -> str:
        abort(403)

    return bp
