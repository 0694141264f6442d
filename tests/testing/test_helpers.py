"""The testing helpers against every database: aim an app at the recorder, read its queue, deliver."""

from __future__ import annotations

from flask_indexnow.testing import IndexNowHarness, RecordingEndpoint, Reply, deliver, point_app_at, queued_urls

from ..conftest import NOWHERE_ENDPOINT


def test_point_deliver_and_restore(make_app, clock) -> None:
    app = make_app()  # sends to a closed port unless aimed elsewhere
    with RecordingEndpoint() as endpoint:
        harness = IndexNowHarness(endpoint)
        assert harness.use(app) is app
        assert app.extensions["indexnow"].settings.endpoint == endpoint.url == app.config["INDEXNOW_ENDPOINT"]
        with app.app_context():
            ext = app.extensions["indexnow"].extension
            ext.enqueue_many(["https://example.com/a", "https://example.com/b"])
            ext.enqueue("https://example.com/gone", "delete")
            ext.enqueue("https://example.com/later", available_at=clock.now.replace(year=clock.now.year + 1))
        assert queued_urls(app, "delete") == ["https://example.com/gone"]
        assert sorted(harness.queued_urls(app)) == [
            "https://example.com/a", "https://example.com/b", "https://example.com/gone", "https://example.com/later"]
        endpoint.script(Reply(200))
        result = deliver(app)
        assert (result.claimed, result.succeeded) == (3, 3)  # every due row in one pass; the future one waits
        assert sorted(harness.sent_urls) == ["https://example.com/a", "https://example.com/b", "https://example.com/gone"]
        assert harness.queued_urls(app) == ["https://example.com/later"]
        harness.close()
    assert app.extensions["indexnow"].settings.endpoint == NOWHERE_ENDPOINT == app.config["INDEXNOW_ENDPOINT"]


def test_point_app_at_a_url_and_undo(make_app) -> None:
    app = make_app(INDEXNOW_ALLOW_PRIVATE_ENDPOINT=False, INDEXNOW_ENDPOINT="https://api.indexnow.org/indexnow")
    undo = point_app_at(app, "http://127.0.0.1:1/x")
    settings = app.extensions["indexnow"].settings
    assert (settings.endpoint, settings.allow_private_endpoint) == ("http://127.0.0.1:1/x", True)
    undo()
    settings = app.extensions["indexnow"].settings
    assert (settings.endpoint, settings.allow_private_endpoint) == ("https://api.indexnow.org/indexnow", False)
    assert app.config["INDEXNOW_ALLOW_PRIVATE_ENDPOINT"] is False


def test_wait_for_tick_waits_for_the_background_tick_a_closed_response_woke(make_app) -> None:
    app = make_app()
    app.add_url_rule("/", "home", lambda: "hello")
    with RecordingEndpoint() as endpoint:
        harness = IndexNowHarness(endpoint)
        harness.use(app)
        endpoint.script(Reply(200, delay=0.3))  # the tick is still waiting for it when close() returns
        with app.app_context():
            app.extensions["indexnow"].extension.enqueue("https://example.com/a")
        app.test_client().get("/").close()
        assert harness.wait_for_tick(app)
        assert harness.sent_urls == ["https://example.com/a"]
        assert harness.queued_urls(app) == []
        harness.close()
