"""Helpers for a site's own tests: aim the app at a recorder, read the queue, deliver.

They take the app itself (not an app context), so a test can call them
between requests of its test client; each opens the app context it needs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from .. import clock
from ..delivery.merge import merge_inbox
from ..delivery.worker import process_queue
from ..state import get_state

if TYPE_CHECKING:
    from flask import Flask

    from ..delivery.worker import PassResult
    from .recorder import RecordingEndpoint


@dataclass(frozen=True)
class QueuedURL:
    """One row of the queue, as a test wants to see it."""

    url: str
    host: str
    action: str
    status: str
    attempts: int
    available_at: datetime
    last_error: str | None
    last_http_status: int | None


def endpoint_config(endpoint: RecordingEndpoint | str) -> dict[str, Any]:
    """The config that sends an app's deliveries to ``endpoint`` (for an app factory)."""
    url = endpoint if isinstance(endpoint, str) else endpoint.url
    return {"INDEXNOW_ENDPOINT": url, "INDEXNOW_ALLOW_PRIVATE_ENDPOINT": True}


def point_app_at(app: Flask, endpoint: RecordingEndpoint | str) -> Callable[[], None]:
    """Send ``app``'s deliveries to ``endpoint`` from now on; returns a function that undoes it.

    Settings are read once at ``init_app`` into a read-only snapshot, so this
    replaces the snapshot (and the two config keys, so the app's config tells
    the truth) rather than editing ``app.config`` alone.
    """
    state = get_state(app)
    config = endpoint_config(endpoint)
    old_settings = state.settings
    old_config = {name: app.config.get(name) for name in config}
    changes: dict[str, Any] = {"endpoint": config["INDEXNOW_ENDPOINT"], "allow_private_endpoint": True}
    if "endpoints" in {f.name for f in dataclasses.fields(old_settings)}:  # several engines: the recorder is all of them
        changes["endpoints"] = ()  # one engine, the recorder: rows are queued for "the first engine"
    if getattr(old_settings, "implied_dry_run", None):  # an endpoint is now given: the implied dry run ends
        changes.update(dry_run=False, implied_dry_run=None)
    state.settings = dataclasses.replace(old_settings, **changes)
    app.config.update(config)

    def restore() -> None:
        state.settings = old_settings
        app.config.update(old_config)

    return restore


def queued(app: Flask, *, status: str | None = None) -> list[QueuedURL]:
    """Every queue row of ``app`` (optionally of one status), oldest first.

    What waits in the inbox (rows queued inside the site's transactions) is
    merged first, as the next pass would: the rows are those the worker sees.
    """
    state = get_state(app)
    table = state.models.queue
    query = sa.select(table).order_by(table.c.id)
    if status is not None:
        query = query.where(table.c.status == status)
    with app.app_context():
        merge_inbox(state, state.engine())
    with app.app_context(), state.engine().connect() as connection:
        return [
            QueuedURL(
                url=row.url, host=row.host, action=row.action, status=row.status, attempts=row.attempts,
                available_at=clock.as_utc(row.available_at), last_error=row.last_error,
                last_http_status=row.last_http_status,
            )
            for row in connection.execute(query)
        ]


def queued_urls(app: Flask, action: str | None = None) -> list[str]:
    """The URLs waiting to be delivered (pending or being delivered), oldest first.

    ``action`` ("update" or "delete") keeps only that kind. Failed rows are
    left out: they wait for a person, not for the worker.
    """
    return [
        row.url for row in queued(app)
        if row.status in ("pending", "processing") and (action is None or row.action == action)
    ]


def deliver(app: Flask, limit: int | None = None) -> PassResult:
    """Run one worker pass now over every row that is due (or ``limit`` rows).

    Rows waiting for a publication date or a retry stay queued, as in
    production: move the clock (``flask_indexnow.clock.set_source``) to make them due.
    """
    state = get_state(app)
    with app.app_context():
        merge_inbox(state, state.engine())  # the pass does it too; first, so the count below sees those rows
        if limit is None:
            table = state.models.queue
            with state.engine().connect() as connection:
                due = connection.execute(
                    sa.select(sa.func.count()).where(table.c.status == "pending", table.c.available_at <= clock.utcnow())
                ).scalar_one()
            limit = max(int(due), 1)
        return process_queue(state, limit)


def wait_for_tick(app: Flask, timeout: float = 10.0) -> bool:
    """Wait until the background tick woken by the app's responses has run; False if ``timeout`` ran out.

    The tick runs on a thread of its own after a response is closed (the test
    client closes it on ``response.close()``), so a test that checks what it
    delivered waits for it here. True at once when no tick runs in the background.
    """
    ticker = get_state(app).ticker
    return ticker is None or ticker.wait_idle(timeout)
