"""Issue 18 (bad input): what ``enqueue``/``enqueue_many`` and ``related=`` are given.

``available_at`` as text, a number or a bool reached the driver (or, on
SQLite, was compared as text); an aware time near year 1 or 9999 overflowed
while being converted. A single ``str`` given where a list of URLs belongs
was read as a list of one-character URLs. Each now fails at once, naming the
argument, and writes nothing; a watched model never raises into the host, so
there the mistake is logged on one line and the page's own URL still goes.
"""

from __future__ import annotations

import logging
from datetime import date, datetime, timedelta, timezone

import pytest
from flask import Flask

from flask_indexnow import IndexNow, signals

from ..conftest import rows
from .blog import close_blog, make_blog

URL = "https://example.com/a"


def ext(app: Flask) -> IndexNow:
    return app.extensions["indexnow"].extension  # type: ignore[no-any-return]


@pytest.mark.parametrize("value", ["2030-01-01", "2030-01-01T00:00:00Z", 1893456000, 1893456000.0, True, False,
                                   [2030, 1, 1]])
def test_available_at_of_the_wrong_type_names_it(app: Flask, value: object) -> None:
    for call in (lambda: ext(app).enqueue(URL, available_at=value),
                 lambda: ext(app).enqueue_many([URL], available_at=value),
                 lambda: ext(app).enqueue(URL, "delete", available_at=value)):
        with pytest.raises(TypeError, match="available_at"):
            call()
    assert rows(app) == []


@pytest.mark.parametrize("value", [
    datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=5))),
    datetime(9999, 12, 31, 23, 0, tzinfo=timezone(timedelta(hours=-5))),
])
def test_an_aware_time_beyond_the_calendar_in_utc_names_available_at(app: Flask, value: datetime) -> None:
    with pytest.raises(ValueError, match="available_at"):
        ext(app).enqueue(URL, available_at=value)
    with pytest.raises(ValueError, match="available_at"):
        ext(app).enqueue_many([URL], available_at=value)
    assert rows(app) == []


def test_dates_and_times_still_work(app: Flask, clock) -> None:
    ext(app).enqueue(URL, available_at=date(2099, 1, 2))
    ext(app).enqueue("https://example.com/b", available_at=datetime(1, 1, 1, 12, tzinfo=timezone.utc))  # past: now
    ext(app).enqueue_many(["https://example.com/c"], available_at=clock.now + timedelta(hours=1))
    due = {r.url: r.available_at.replace(tzinfo=timezone.utc) for r in rows(app)}
    assert due == {URL: datetime(2099, 1, 2, tzinfo=timezone.utc), "https://example.com/b": clock.now,
                   "https://example.com/c": clock.now + timedelta(hours=1)}


@pytest.mark.parametrize("value", [URL, b"https://example.com/a"])
def test_a_single_string_for_enqueue_many_names_the_argument(app: Flask, value: object) -> None:
    with pytest.raises(TypeError, match="urls must be a list of URLs"):
        ext(app).enqueue_many(value)  # type: ignore[arg-type]
    assert rows(app) == []
    assert ext(app).enqueue_many(u for u in [URL]).queued == 1  # any other iterable is fine


class Doc:
    def __init__(self, slug: str) -> None:
        self.slug = slug


def test_a_related_function_returning_one_string_is_logged_and_the_page_still_goes(app: Flask, caplog) -> None:
    ext(app).watch(Doc, url=lambda d: f"https://example.com/{d.slug}", related=lambda d: "https://example.com/list")
    with caplog.at_level(logging.WARNING, logger="flask_indexnow"):
        signals.resource_saved.send(app, resource=Doc("x"))
    assert [r.url for r in rows(app)] == ["https://example.com/x"]  # not 24 one-character "URLs"
    [line] = [r for r in caplog.records if "related" in r.getMessage()]
    assert "related= must return a list of URLs, got a single str" in line.getMessage()
    assert not line.exc_info  # one clear line, no traceback


def test_a_watched_model_whose_related_returns_a_string(make_app, caplog) -> None:
    blog = make_blog(make_app, lambda ext, Post: ext.watch(
        Post, url=lambda p: f"https://example.com/posts/{p.slug}", related=lambda p: "https://example.com/posts/"))
    try:
        with caplog.at_level(logging.WARNING, logger="flask_indexnow"):
            blog.post("hello")  # clears the queue after the commit
            post = blog.session.get(blog.Post, 1)
            post.title = "Changed"
            blog.session.commit()
        assert blog.queue() == {"https://example.com/posts/hello": "update"}
        assert "related= must return a list of URLs, got a single str" in caplog.text
    finally:
        close_blog(blog)
