"""Issue 18 / SPEC §13: the URL normal form, so dedup does not depend on spelling.

``https://www.example.org:443/a``, ``https://www.example.org/%7Ea`` and
``https://www.example.org/~a`` were each stored and sent separately. The
fast path and ``check_urls`` are held to the full check by the property tests
of test_url_fastpath.py and test_url_batch_check.py (with and without a
parameter filter); this file states the rules, and shows them end to end.
"""

from __future__ import annotations

import pytest
from flask import Flask
from hypothesis import given, settings
from hypothesis import strategies as st

from flask_indexnow import IndexNow, InvalidURLError
from flask_indexnow.config import DEFAULTS
from flask_indexnow.urls import QueryFilter, check_url, check_urls

from ..conftest import rows
from .test_url_fastpath import common, fastish, url

TRACKING = QueryFilter(DEFAULTS["INDEXNOW_STRIP_QUERY_PARAMS"][0])


@pytest.mark.parametrize(("written", "stored"), [
    # the default port
    ("https://www.example.org:443/a", "https://www.example.org/a"),
    ("http://www.example.org:80/a", "http://www.example.org/a"),
    ("http://www.example.org:080/a", "http://www.example.org/a"),
    ("https://www.example.org:00443/a", "https://www.example.org/a"),
    ("http://www.example.org:443/a", "http://www.example.org:443/a"),  # not http's default
    ("https://www.example.org:80/a", "https://www.example.org:80/a"),
    ("https://www.example.org:8443/a", "https://www.example.org:8443/a"),
    # escapes
    ("https://www.example.org/%7Ea", "https://www.example.org/~a"),
    ("https://www.example.org/%7ea", "https://www.example.org/~a"),
    ("https://www.example.org/%41%5a%30%2D%2E%5F", "https://www.example.org/AZ0-._"),
    ("https://www.example.org/a%2fb%3f%23", "https://www.example.org/a%2Fb%3F%23"),
    ("https://www.example.org/a%20b?q=%e2%82%ac", "https://www.example.org/a%20b?q=%E2%82%AC"),
    ("https://www.example.org/100%", "https://www.example.org/100%25"),  # a % that escapes nothing
    ("https://www.example.org/%zz%4", "https://www.example.org/%25zz%254"),
    ("https://www.example.org/?q=%7E&r=%26", "https://www.example.org/?q=~&r=%26"),
    # non-ASCII, bidi marks, C1 controls, zero-width characters in path and query
    ("https://www.example.org/caf\u00e9", "https://www.example.org/caf%C3%A9"),
    ("https://www.example.org/a\u202eb", "https://www.example.org/a%E2%80%AEb"),
    ("https://www.example.org/a\u200eb?x=\u2066y", "https://www.example.org/a%E2%80%8Eb?x=%E2%81%A6y"),
    ("https://www.example.org/a\u0085b", "https://www.example.org/a%C2%85b"),
    ("https://www.example.org/a\u200bb", "https://www.example.org/a%E2%80%8Bb"),
    ("https://www.example.org/\U0001f600", "https://www.example.org/%F0%9F%98%80"),
    ("https://www.example.org/caf%C3%A9", "https://www.example.org/caf%C3%A9"),
    # tracking parameters (the default list); the others keep their order
    ("https://www.example.org/a?utm_source=x&page=2&gclid=y", "https://www.example.org/a?page=2"),
    ("https://www.example.org/a?b=2&a=1&utm_medium=m&utm_campaign=c", "https://www.example.org/a?b=2&a=1"),
    ("https://www.example.org/a?utm_source=x", "https://www.example.org/a"),
    ("https://www.example.org/a?fbclid=1&msclkid=2&mc_cid=3&mc_eid=4&_ga=5", "https://www.example.org/a"),
    ("https://www.example.org/a?utm_source", "https://www.example.org/a"),  # a name without a value
    ("https://www.example.org/a?%75tm_source=x&p=1", "https://www.example.org/a?p=1"),  # escaped name
    ("https://www.example.org/a?_gac=1&gclidx=2&xutm_a=3&UTM_SOURCE=4", "https://www.example.org/a?_gac=1&gclidx=2&xutm_a=3&UTM_SOURCE=4"),
    ("https://www.example.org/a?q=utm_source&r=gclid", "https://www.example.org/a?q=utm_source&r=gclid"),  # values
    ("https://www.example.org/utm_source=1?p=1", "https://www.example.org/utm_source=1?p=1"),  # the path is no query
    ("https://www.example.org/a?p=1&&utm_id=2&", "https://www.example.org/a?p=1&&"),
])
def test_the_normal_form(written: str, stored: str) -> None:
    assert check_url(written, strip=TRACKING).url == stored
    assert check_urls([written], strip=TRACKING)[0] == [stored]
    assert check_url(stored, strip=TRACKING).url == stored  # the normal form is its own normal form


@pytest.mark.parametrize("written", ["https://www.example.org:0/", "http://www.example.org:00/a",
                                     "https://www.example.org/\ud800"])
def test_port_zero_and_lone_surrogates_are_refused(written: str) -> None:
    with pytest.raises(InvalidURLError, match="port 0|surrogate"):
        check_url(written)


def test_ascii_spaces_and_controls_stay_refused() -> None:
    for written in ["https://www.example.org/a b", "https://www.example.org/a\x00", "https://www.example.org/?a=\x7f"]:
        with pytest.raises(InvalidURLError, match="spaces or control characters"):
            check_url(written)


def test_without_a_filter_every_parameter_is_kept() -> None:
    assert check_url("https://www.example.org/a?utm_source=x").url == "https://www.example.org/a?utm_source=x"
    own = QueryFilter(["ref", "session_*"])
    assert check_url("https://www.example.org/a?ref=1&session_id=2&utm_source=3&p=4", strip=own).url == (
        "https://www.example.org/a?utm_source=3&p=4")


@settings(max_examples=400, deadline=None)
@given(st.one_of(fastish, url(), common))
def test_the_normal_form_is_idempotent(value: str) -> None:
    """What is stored checks again to itself: the queue's dedup key never moves."""
    try:
        first = check_url(value, strip=TRACKING)
    except InvalidURLError:
        return
    assert check_url(first.url, strip=TRACKING) == first


def test_one_row_per_url_however_it_is_spelt(app: Flask) -> None:
    ext: IndexNow = app.extensions["indexnow"].extension
    spellings = ["https://www.example.org:443/~a", "https://www.example.org/%7Ea", "https://www.example.org/%7ea",
                 "https://www.example.org/~a?utm_source=news&utm_medium=mail", "https://WWW.example.org/~a#top"]
    for spelling in spellings:
        assert ext.enqueue(spelling) == "https://www.example.org/~a"
    assert ext.enqueue_many(spellings).queued == 1
    assert [r.url for r in rows(app)] == ["https://www.example.org/~a"]


def test_the_setting_steers_the_queue(make_app) -> None:
    app = make_app(INDEXNOW_STRIP_QUERY_PARAMS=())
    ext: IndexNow = app.extensions["indexnow"].extension
    with app.app_context():
        ext.enqueue("https://www.example.org/a?utm_source=x")
        ext.enqueue_many(["https://www.example.org/b?ref=1&utm_source=x"])
    assert sorted(r.url for r in rows(app)) == ["https://www.example.org/a?utm_source=x",
                                                "https://www.example.org/b?ref=1&utm_source=x"]
    own = make_app(INDEXNOW_STRIP_QUERY_PARAMS=["ref"])
    with own.app_context():
        own.extensions["indexnow"].extension.enqueue_many(["https://www.example.org/c?ref=1&utm_source=x"])
    assert [r.url for r in rows(own)] == ["https://www.example.org/c?utm_source=x"]
