"""SPEC §8: "Process queue" runs a full pass; "Retry failed" puts failed rows back."""

from __future__ import annotations

import re

from flask_indexnow.status import csrf

from ..conftest import rows
from ..endpoint_server import Reply
from .conftest import PREFIX, allow, extension, page_token


def notice(client) -> str:
    page = client.get(PREFIX + "/").get_data(as_text=True)
    match = re.search(r'<div class="notice n-(\w+)" role="status" id="notice">([^<]*)</div>', page)
    assert match, "no notice on the page"
    return f"{match.group(1)}: {match.group(2)}"


def test_process_runs_a_full_pass(make_app, endpoint):
    app = allow(make_app(INDEXNOW_BATCH_SIZE=3, INDEXNOW_TICK_BATCH_MAX=1, INDEXNOW_QUEUE_ENABLED=False))
    with app.app_context():
        for i in range(5):
            extension(app).enqueue(f"https://example.com/{i}")
    client = app.test_client()
    token = page_token(client)
    response = client.post(PREFIX + "/process", data={csrf.FIELD: token},
                           headers={"Origin": "http://localhost", "Sec-Fetch-Site": "same-origin"})
    assert response.status_code == 303
    assert response.headers["Location"].endswith("/indexnow/#actions")
    # INDEXNOW_BATCH_SIZE rows, not the tick's smaller limit
    assert len(endpoint.urls_received()) == 3
    assert len(rows(app)) == 2 and len(rows(app, "History", status="success")) == 3
    assert notice(client) == "ok: Queue processed: claimed 3, succeeded 3, retried 0, failed 0, stale reset 0."
    # the notice is shown once
    assert 'id="notice"' not in client.get(PREFIX + "/").get_data(as_text=True)


def test_process_reports_failures(make_app, endpoint):
    app = allow(make_app(INDEXNOW_QUEUE_ENABLED=False))
    endpoint.script(Reply(403, body=b'{"code":"UserForbiddedToAccessSite"}'))
    with app.app_context():
        extension(app).enqueue("https://example.com/a")
    client = app.test_client()
    client.post(PREFIX + "/process", data={csrf.FIELD: page_token(client)})
    assert notice(client).startswith("warning: Queue processed: claimed 1, succeeded 0, retried 0, failed 1")
    page = client.get(PREFIX + "/").get_data(as_text=True)
    assert "UserForbiddedToAccessSite" in page  # the last error, in the failed rows
    assert re.search(r'<span class="badge b-rejected">rejected</span>', page)


def test_process_when_sending_is_impossible(make_app, endpoint):
    app = allow(make_app(INDEXNOW_ENDPOINT="not a url", INDEXNOW_QUEUE_ENABLED=False))
    with app.app_context():
        extension(app).enqueue("https://example.com/a")
    client = app.test_client()
    response = client.post(PREFIX + "/process", data={csrf.FIELD: page_token(client)})
    assert response.status_code == 303
    assert notice(client).startswith("warning: Nothing sent: INDEXNOW_ENDPOINT")
    assert [r.status for r in rows(app)] == ["pending"]
    assert endpoint.received == []


def test_retry_failed(make_app, endpoint):
    app = allow(make_app(INDEXNOW_QUEUE_ENABLED=False))
    endpoint.script(Reply(422), Reply(422))
    with app.app_context():
        extension(app).enqueue("https://example.com/a")
        extension(app).process_queue()
        extension(app).enqueue("https://example.com/b")
        extension(app).process_queue()
    assert [r.status for r in rows(app)] == ["failed", "failed"]
    client = app.test_client()
    response = client.post(PREFIX + "/retry-failed", data={csrf.FIELD: page_token(client)})
    assert response.status_code == 303
    assert notice(client) == "ok: 2 failed URL(s) back to pending."
    assert [(r.status, r.attempts, r.last_error) for r in rows(app)] == [("pending", 0, None)] * 2
    client.post(PREFIX + "/retry-failed", data={csrf.FIELD: page_token(client)})
    assert notice(client) == "ok: No failed URLs to retry."
    # and the next press of "Process queue" delivers them
    client.post(PREFIX + "/process", data={csrf.FIELD: page_token(client)})
    assert rows(app) == []
    assert sorted(endpoint.urls_received()[-2:]) == ["https://example.com/a", "https://example.com/b"]


def test_notice_is_escaped(make_app, endpoint):
    app = allow(make_app(INDEXNOW_ENDPOINT="<script>x</script>", INDEXNOW_QUEUE_ENABLED=False))
    client = app.test_client()
    client.post(PREFIX + "/process", data={csrf.FIELD: page_token(client)})
    page = client.get(PREFIX + "/").get_data(as_text=True)
    assert "<script>x" not in page and "&lt;script&gt;x" in page
