"""A page delivered before and no longer indexable is sent once more, as a delete; then skipped."""

from __future__ import annotations

import pytest

from ..conftest import rows
from .conftest import send, skipped
from .site import BASE

pytestmark = pytest.mark.every_backend  # the ledger's writes and the action change are set-based SQL

URL = f"{BASE}/flips"


def test_delivered_then_noindex_is_withdrawn_once(site, endpoint, clock):
    app = site()
    assert send(app, "/flips").succeeded == 1  # indexable: delivered, the ledger knows
    [entry] = rows(app, "URLState")
    assert (entry.last_success_at, entry.withdrawn_at, entry.verdict) == (clock.now, None, "indexable")

    app.config["SITE_FLIP_NOINDEX"] = True
    clock.advance(60)
    result = send(app, "/flips")
    assert (result.succeeded, result.skipped) == (1, 0)
    assert endpoint.urls_received() == [URL, URL]  # sent again: engines recrawl and drop it
    assert [(h.action, h.status) for h in rows(app, "History")] == [("update", "success"), ("delete", "success")]
    [entry] = rows(app, "URLState")
    assert (entry.withdrawn_at, entry.verdict) == (clock.now, "noindex: meta robots")

    clock.advance(60)
    result = send(app, "/flips")  # still noindex: engines were told, nothing more to say
    assert (result.succeeded, result.skipped) == (0, 1)
    assert endpoint.urls_received() == [URL, URL]
    assert skipped(app) == {URL: "noindex: meta robots"}

    app.config["SITE_FLIP_NOINDEX"] = False  # indexable again: sent, and the withdrawal is over
    clock.advance(60)
    assert send(app, "/flips").succeeded == 1
    [entry] = rows(app, "URLState")
    assert (entry.withdrawn_at, entry.last_success_at) == (None, clock.now)
    app.config["SITE_FLIP_NOINDEX"] = True
    clock.advance(60)
    assert send(app, "/flips").succeeded == 1  # so the next noindex withdraws it once more
    assert [h.action for h in rows(app, "History", status="success")] == ["update", "delete", "update", "delete"]


def test_a_page_never_delivered_is_just_skipped(site, endpoint, clock):
    app = site()
    app.config["SITE_FLIP_NOINDEX"] = True
    result = send(app, "/flips")
    assert (result.succeeded, result.skipped) == (0, 1)
    assert endpoint.received == []
    [entry] = rows(app, "URLState")  # the verdict is remembered; nothing was delivered
    assert (entry.last_success_at, entry.withdrawn_at, entry.verdict) == (None, None, "noindex: meta robots")


def test_a_withdrawal_that_fails_is_retried_as_a_delete(site, endpoint, clock):
    app = site(INDEXNOW_RETRY_DELAY=60)
    send(app, "/flips")
    app.config["SITE_FLIP_NOINDEX"] = True
    endpoint.script(503)
    clock.advance(60)
    assert send(app, "/flips").retried == 1
    [row] = rows(app, "Queue")
    assert (row.action, row.status) == ("delete", "pending")  # a delete now: never verified again
    clock.advance(61)
    assert send(app).succeeded == 1
    [entry] = rows(app, "URLState")
    assert entry.withdrawn_at == clock.now
