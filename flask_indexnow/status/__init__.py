"""The status page: is delivery working, and if not, why.

``create_blueprint()`` builds the ``indexnow`` blueprint that ``web.py``
mounts at INDEXNOW_STATUS_URL_PREFIX:

- ``GET /``: the page; ``GET /status.json``: every count it shows;
- ``POST /process`` and ``POST /retry-failed``: its two buttons, and
  ``POST /schedules/pause|resume|trigger`` (:mod:`.schedule_views`), refused
  cross-site (see :mod:`.csrf`);
- everything behind ``@indexnow.status_auth``: 403 until the app registers it
  and it returns True.

Templates are ``indexnow/status.html`` and ``indexnow/message.html``; an app
can override them with its own files of the same name.
"""

from __future__ import annotations

import sqlalchemy as sa
from flask import Blueprint

from . import schedule_views, views
from .csrf import CSRFError
from .display import FILTERS


def create_blueprint() -> Blueprint:
    bp = Blueprint(
        "indexnow",
        __name__,
        template_folder="../templates",
        static_folder="../static/indexnow",
        static_url_path="/_static",
    )
    bp.before_request(views.require_access)
    bp.after_request(views.add_security_headers)
    bp.add_url_rule("/", "index", views.index, methods=["GET"])
    bp.add_url_rule("/status.json", "status_json", views.status_json, methods=["GET"])
    bp.add_url_rule("/process", "process", views.process, methods=["POST"])
    bp.add_url_rule("/retry-failed", "retry_failed", views.retry_failed, methods=["POST"])
    bp.add_url_rule("/schedules/pause", "schedule_pause", schedule_views.pause, methods=["POST"])
    bp.add_url_rule("/schedules/resume", "schedule_resume", schedule_views.resume, methods=["POST"])
    bp.add_url_rule("/schedules/trigger", "schedule_trigger", schedule_views.trigger, methods=["POST"])
    bp.register_error_handler(CSRFError, views.refused)
    bp.register_error_handler(sa.exc.SQLAlchemyError, views.database_error)
    for name, fn in FILTERS.items():
        bp.add_app_template_filter(fn, name)
    return bp


__all__ = ["create_blueprint"]
