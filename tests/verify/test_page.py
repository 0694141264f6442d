"""Judging one answer (no database, no app): headers, the head's tags, what is not a tag."""

from __future__ import annotations

import pytest

from flask_indexnow.verify.page import PageAnswer, header_noindex, judge, read_head

URL = "https://www.example.com/a"
HTML = [("Content-Type", "text/html; charset=utf-8")]


def html(head: str, body: str = "<p>x</p>") -> PageAnswer:
    return PageAnswer(200, HTML, f"<html><head>{head}</head><body>{body}</body></html>".encode())


@pytest.mark.parametrize(("values", "noindex"), [
    (["noindex"], True),
    (["NoIndex, nofollow"], True),
    (["none"], True),
    (["bingbot: noindex"], True),
    (["yandex: none"], True),
    (["googlebot: noindex"], False),
    (["googlebot: noindex, nofollow", "index"], False),
    (["unavailable_after: 2030-01-01", "max-snippet: 20"], False),
    (["nofollow"], False),
    (["otherbot: nofollow, bingbot: noindex"], True),
])
def test_x_robots_tag(values, noindex):
    assert header_noindex(values) is noindex


@pytest.mark.parametrize(("head", "reason", "detail"), [
    ('<meta name="robots" content="noindex">', "noindex", "meta robots"),
    ("<meta content='NONE' name='ROBOTS'>", "noindex", "meta robots"),
    ('<meta name="robots" content="index, follow">', "indexable", ""),
    ('<meta name="googlebot" content="noindex">', "indexable", ""),
    ('<!-- <meta name="robots" content="noindex"> -->', "indexable", ""),
    ('<script>var t = \'<meta name="robots" content="noindex">\';</script>', "indexable", ""),
    ('<title><meta name="robots" content="noindex"></title>', "indexable", ""),
    ('<meta name="description" content="a > b"><meta name="robots" content="noindex">', "noindex", "meta robots"),
    ('<link rel="canonical" href="https://www.example.com/b">', "canonical", "https://www.example.com/b"),
    ('<link rel="canonical" href="b">', "canonical", "https://www.example.com/b"),
    ('<link rel="canonical" href="https://WWW.example.com:443/a#top">', "indexable", ""),
    ('<link rel="alternate canonical" href="/c">', "canonical", "https://www.example.com/c"),
    ('<link rel="stylesheet" href="/site.css">', "indexable", ""),
])
def test_the_head(head, reason, detail):
    verdict = judge(URL, html(head))
    assert (verdict.reason, verdict.detail) == (reason, detail)


def test_only_the_head_counts():
    answer = html("", body='<p>How to write <meta name="robots" content="noindex"></p>')
    assert judge(URL, answer).reason == "indexable"


def test_a_link_header_names_the_canonical():
    answer = PageAnswer(200, [("Content-Type", "application/pdf"),
                              ("Link", '<https://www.example.com/doc.pdf>; rel="canonical"')], b"%PDF-1.7")
    assert (judge(URL, answer).reason, judge(URL, answer).detail) == ("canonical", "https://www.example.com/doc.pdf")


def test_a_page_that_is_not_html_is_judged_by_its_headers_only():
    answer = PageAnswer(200, [("Content-Type", "text/plain")], b'<meta name="robots" content="noindex">')
    assert judge(URL, answer).reason == "indexable"


def test_the_charset_of_the_page_is_used():
    head = '<meta name="robots" content="noindex"><title>Café</title>'.encode("utf-16")
    assert read_head(head, "utf-16").noindex_by == "robots"
    assert read_head(b'<meta name="robots" content="noindex">', "no-such-charset").noindex_by == "robots"


@pytest.mark.parametrize(("status", "reason", "detail"), [
    (301, "redirect", "HTTP 301 to https://www.example.com/b"),
    (308, "redirect", "HTTP 308 to https://www.example.com/b"),
    (404, "gone", "HTTP 404"),
    (410, "gone", "HTTP 410"),
    (403, "gone", "HTTP 403"),
    (429, "error", "the page answered HTTP 429"),
    (500, "error", "the page answered HTTP 500"),
])
def test_the_status(status, reason, detail):
    verdict = judge(URL, PageAnswer(status, [("Location", "/b")]))
    assert (verdict.reason, verdict.detail) == (reason, detail)


def test_a_redirect_without_location():
    assert judge(URL, PageAnswer(302)).detail == "HTTP 302 without a Location"


def test_broken_markup_is_no_verdict():
    assert judge(URL, PageAnswer(200, HTML, b"<html><head><meta name=robots content=noindex<<<</head>")).reason \
        in ("noindex", "indexable")
    assert judge(URL, PageAnswer(200, HTML, b"\xff\xfe<\x00\x00garbage")).reason == "indexable"


def test_what_the_page_names_is_not_trusted():
    answer = PageAnswer(301, [("Location", "http://[oops/\x1b[31mred")])
    verdict = judge(URL, answer)
    assert verdict.reason == "redirect" and "\x1b" not in verdict.detail
    broken = judge(URL, html('<link rel="canonical" href="http://[broken">'))
    assert (broken.reason, broken.detail) == ("canonical", "http://[broken")
    long = judge(URL, html(f'<link rel="canonical" href="https://www.example.com/{"x" * 3000}">'))
    assert long.reason == "canonical" and len(long.detail) <= 501
