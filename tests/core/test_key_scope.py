"""A key file's directory is the scope of the key (issue 20, SPEC §13)."""

from __future__ import annotations

import logging

import pytest

from flask_indexnow import signals
from flask_indexnow.errors import InvalidURLError
from flask_indexnow.explain import explain_url

from ..conftest import KEY, rows
from ..web.conftest import PREFIX, allow

BLOG = "https://{host}/blog/{key}.txt"


def ext(app):
    return app.extensions["indexnow"].extension


def test_a_url_outside_the_key_files_directory_is_refused_at_enqueue(make_app, endpoint, clock):
    app = make_app(INDEXNOW_KEY_LOCATION=BLOG)
    with app.app_context():
        assert ext(app).enqueue("https://www.example.com/blog/post-1")
        with pytest.raises(InvalidURLError) as info:
            ext(app).enqueue("https://www.example.com/shop/item")
        message = str(info.value)
        assert "INDEXNOW_KEY_LOCATION" in message and "/blog/" in message
        assert f"https://www.example.com/blog/{KEY}.txt" in message
        with pytest.raises(InvalidURLError):
            ext(app).enqueue("https://www.example.com/blogger", action="delete")  # a prefix of the name is not in it
        result = ext(app).enqueue_many(["https://www.example.com/blog/a", "https://www.example.com/shop/b",
                                        "https://www.example.com/", "https://other.example.org/blog/c?x=1"])
        assert result.queued == 2
        assert [url for url, _ in result.rejected] == ["https://www.example.com/shop/b", "https://www.example.com/"]
        assert all("INDEXNOW_KEY_LOCATION" in reason for _, reason in result.rejected)
        assert ext(app).process_queue().succeeded == 3
    assert sorted(endpoint.urls_received()) == ["https://other.example.org/blog/c?x=1",
                                                 "https://www.example.com/blog/a",
                                                 "https://www.example.com/blog/post-1"]
    assert {r.key_location for r in endpoint.received} == {f"https://www.example.com/blog/{KEY}.txt",
                                                          f"https://other.example.org/blog/{KEY}.txt"}


@pytest.mark.parametrize("location", [None, "https://{host}/{key}.txt", "https://cdn.example.net/keys/{key}.txt",
                                      "https://keys.example.net/{host}/{key}"])
def test_a_key_file_at_the_root_or_on_another_host_scopes_nothing(make_app, location):
    app = make_app(INDEXNOW_KEY_LOCATION=location)
    with app.app_context():
        assert ext(app).enqueue_many(["https://www.example.com/shop/item", "https://www.example.com/"]).queued == 2


def test_a_written_out_host_scopes_its_own_urls_only(make_app):
    app = make_app(INDEXNOW_KEY_LOCATION="https://www.example.com/news/{key}.txt")
    with app.app_context():
        result = ext(app).enqueue_many(["https://www.example.com/news/a", "https://www.example.com/b",
                                        "https://other.example.org/b"])
    assert result.queued == 2 and [u for u, _ in result.rejected] == ["https://www.example.com/b"]


def test_signals_and_watched_models_log_the_refusal(make_app, caplog):
    app = make_app(INDEXNOW_KEY_LOCATION=BLOG)
    caplog.set_level(logging.WARNING, logger="flask_indexnow")
    with app.app_context():
        signals.resource_saved.send(app, url="https://www.example.com/shop/item")
        signals.resource_saved.send(app, url="https://www.example.com/blog/ok")
    assert [r.url for r in rows(app)] == ["https://www.example.com/blog/ok"]
    [line] = [r.getMessage() for r in caplog.records if "event skipped" in r.getMessage()]
    assert "INDEXNOW_KEY_LOCATION" in line and "/blog/" in line


def test_explain_and_the_status_page_name_the_scope(make_app):
    app = allow(make_app(INDEXNOW_KEY_LOCATION=BLOG))
    with app.app_context():
        story = explain_url(app.extensions["indexnow"], "https://www.example.com/shop/item")
    assert not story.accepted and "INDEXNOW_KEY_LOCATION" in (story.refused_because or "")
    data = app.test_client().get(PREFIX + "/status.json").get_json()
    [check] = [c for c in data["checks"] if c["name"] == "key_file"]
    assert "only URLs under /blog/ of each host are accepted" in check["message"]
    result = app.test_cli_runner().invoke(args=["indexnow", "explain", "https://www.example.com/shop/item"])
    assert "INDEXNOW_KEY_LOCATION" in result.output
