"""``GET {INDEXNOW_STATUS_URL_PREFIX}/metrics``: the Prometheus exposition, for the status page's users or a token.

Access: a bearer token equal to INDEXNOW_METRICS_TOKEN (compared in constant
time), or whoever ``@indexnow.status_auth`` lets see the status page.
Anyone else gets 401 when the request carried no credentials, 403 when it
carried wrong ones. Without ``prometheus_client`` the route answers 501 with
what to install. Every answer is ``Cache-Control: no-store``: a proxy must
never hand out an old scrape, nor one meant for someone else.
"""

from __future__ import annotations

import hmac
import logging

import sqlalchemy as sa
from flask import Blueprint, Response, request

from ..sqlutil import error_text
from ..state import get_state
from .snapshot import read_snapshot

logger = logging.getLogger(__name__)

#: What a site without the ``[metrics]`` extra is told.
MISSING_LIBRARY = "Prometheus metrics need the prometheus_client library: pip install 'flask-indexnow[metrics]'\n"
HEADERS = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}


def create_blueprint() -> Blueprint:
    """The ``indexnow_metrics`` blueprint: one route, mounted at the status page's prefix."""
    bp = Blueprint("indexnow_metrics", __name__)
    bp.add_url_rule("/metrics", "metrics", metrics, methods=["GET"])
    return bp


def _text(body: str, status: int, **headers: str) -> Response:
    return Response(body, status, headers={**HEADERS, **headers}, mimetype="text/plain")


def refusal() -> Response | None:
    """None when the request may read the metrics, else the 401 or 403 answer."""
    state = get_state()
    token = state.settings.metrics_token
    header = request.headers.get("Authorization")
    if token is not None and header is not None:
        scheme, _, given = header.strip().partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode()):
            return None
    callback = state.extension.status_auth_callback
    if callback is not None and callback() is True:
        return None
    if header is None:
        return _text("Authentication required: send Authorization: Bearer <INDEXNOW_METRICS_TOKEN>, "
                     "or sign in as @indexnow.status_auth requires.\n", 401,
                     **{"WWW-Authenticate": 'Bearer realm="indexnow metrics"'})
    return _text("Forbidden: the credentials sent do not give access to the IndexNow metrics.\n", 403)


def metrics() -> Response:
    refused = refusal()
    if refused is not None:
        return refused
    try:
        from prometheus_client import CollectorRegistry
        from prometheus_client.exposition import choose_encoder

        from .collector import SnapshotCollector
    except ImportError:
        return _text(MISSING_LIBRARY, 501)
    try:
        snapshot = read_snapshot(get_state())
    except sa.exc.SQLAlchemyError as exc:
        logger.exception("IndexNow metrics: database error")
        return _text(f"The database could not be read: {error_text(exc)[:300]}\n", 503)
    registry = CollectorRegistry(auto_describe=False)  # this request's own: nothing kept in the process
    registry.register(SnapshotCollector(snapshot))
    encoder, content_type = choose_encoder(request.headers.get("Accept", ""))
    return Response(encoder(registry), 200, headers=HEADERS, content_type=content_type)
