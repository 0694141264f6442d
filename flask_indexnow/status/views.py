"""The status page's routes: the page, ``status.json`` and the two buttons."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from flask import abort, jsonify, redirect, render_template, request, session, url_for
from flask.typing import ResponseReturnValue

from .. import queue
from ..delivery import worker
from ..scheduling.report import schedule_entries
from ..sitemap.cache import summary as sitemap_summary
from ..sqlutil import error_text
from ..state import IndexNowState, get_state
from . import csrf
from .chart import build_chart
from .document import status_document
from .queries import HistoryFilter, failed_rows, history_page, recent_jobs

logger = logging.getLogger(__name__)
NOTICE_KEY = "_indexnow_notice"
#: Headers of every page of the blueprint: never cached, never framed
#: (the buttons cannot be clickjacked), no script at all.
SECURITY_HEADERS = {
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
}


def require_access() -> None:
    """``before_request``: only a user the app's ``@indexnow.status_auth`` accepts gets in."""
    callback = get_state().extension.status_auth_callback
    if callback is None:
        abort(403, description="The IndexNow status page is off until the app registers @indexnow.status_auth.")
    if callback() is not True:
        abort(403)


def add_security_headers(response: Any) -> Any:
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    return response


def status_data(state: IndexNowState, connection: Any) -> dict[str, Any]:
    """The status document (:func:`.document.status_document`): what the page, the JSON and the CLI share."""
    return status_document(state, connection)


def index() -> ResponseReturnValue:
    state = get_state()
    flt = HistoryFilter.from_args(request.args)
    with state.engine().connect() as connection:
        data = status_data(state, connection)
        page = history_page(state, connection, flt)
        failed = failed_rows(state, connection)
        schedule_rows = schedule_entries(state, connection)  # each with its newest occurrence
        jobs = recent_jobs(state, connection)
    notice = session.pop(NOTICE_KEY, None) if csrf.available() else None
    return render_template(
        "indexnow/status.html",
        data=data,
        verdict=data["verdict"],
        queue=data["queue"],
        history_24h=data["history_24h"],
        jobs_count=data["jobs"],
        hosts=[_with_time(h, "answered_at") for h in data["hosts"]],
        checks=data["checks"],
        chart=build_chart(data["deliveries_per_hour"]),
        page=page,
        flt=page.filter,
        failed=failed,
        schedules=schedule_rows,
        jobs=jobs,
        notice=notice if isinstance(notice, dict) else None,
        csrf_token=csrf.generate_token(),
        csrf_field=csrf.FIELD,
        host_csrf=csrf.host_field(),
        settings=state.settings,
        sitemap=sitemap_summary(state),
    )


def _with_time(item: dict[str, Any], name: str) -> dict[str, Any]:
    """A copy of a JSON-ready dict with its ISO time ``name`` read back, for the template."""
    value = item.get(name)
    return {**item, name: datetime.fromisoformat(value) if isinstance(value, str) else None}


def status_json() -> ResponseReturnValue:
    state = get_state()
    with state.engine().connect() as connection:
        return jsonify(status_data(state, connection))


def _done(kind: str, text: str, details: dict[str, Any] | None = None) -> ResponseReturnValue:
    """Remember what the button did for the next page view (Post/Redirect/Get)."""
    session[NOTICE_KEY] = {"kind": kind, "text": text, "details": details or {}}
    return redirect(url_for(".index") + "#actions", 303)


def process() -> ResponseReturnValue:
    """"Process queue": one full pass (INDEXNOW_BATCH_SIZE rows), as ``flask indexnow process``."""
    csrf.protect()
    result = worker.process_queue(get_state())
    if result.skipped_reason:
        return _done("warning", f"Nothing sent: {result.skipped_reason}", result.as_dict())
    kind = "ok" if not (result.failed or result.retried) else "warning"
    return _done(kind, f"Queue processed: {result}.", result.as_dict())


def retry_failed() -> ResponseReturnValue:
    """"Retry failed": every failed row back to pending, due now."""
    csrf.protect()
    count = queue.retry_failed(get_state())
    return _done("ok", f"{count} failed URL(s) back to pending." if count else "No failed URLs to retry.",
                 {"retried": count})


def refused(error: csrf.CSRFError) -> ResponseReturnValue:
    return render_template("indexnow/message.html", title="Request refused", message=error.reason), error.status


def database_error(error: sa.exc.SQLAlchemyError) -> ResponseReturnValue:
    logger.exception("IndexNow status page: database error")
    detail = error_text(error)[:300]
    message = (f"The database could not be read ({detail}). "
               "If the extension's tables do not exist yet, run `flask indexnow init-db`.")
    return render_template("indexnow/message.html", title="Database error", message=message), 503
