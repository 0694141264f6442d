"""Issue 11.3: ``check_urls`` (``enqueue_many``'s short cut for URLs already in normal form)
gives, URL by URL, exactly what ``check_url`` gives.

The generators are test_url_fastpath.py's; the file is separate so the two
property tests run side by side on the suite's workers.
"""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from flask_indexnow import InvalidURLError
from flask_indexnow.urls import (
    _NORMAL_RE,
    KEEP_ALL_PARAMS,
    MAX_URL_LENGTH,
    QueryFilter,
    _judge_host,
    check_url,
    check_urls,
)

from .test_url_fastpath import NAMES_ONLY, TRACKING, ascii_name, common, fastish, printable, query_heavy, url


def one_by_one(values: list[object], allowed: frozenset[str] | None,
               strip: QueryFilter = KEEP_ALL_PARAMS) -> tuple[list[str], list[str], list[object]]:
    """``check_urls``'s answer built from ``check_url``, the reference."""
    good: list[str] = []
    hosts: list[str] = []
    refused: list[object] = []
    for value in values:
        try:
            checked = check_url(value, allowed, strip)
        except InvalidURLError as exc:
            refused.append((str(value), str(exc)))
        else:
            good.append(checked.url)
            hosts.append(checked.host)
    return good, hosts, refused


normal = st.builds(  # already in normal form, or one edge away from it
    lambda sch, h, path, q: f"{sch}{h}{path}{q}",
    st.sampled_from(["https://", "http://"]),
    ascii_name(),
    st.one_of(st.just("/"), printable.map(lambda t: "/" + t), st.just("")),
    st.one_of(st.just(""), st.just("?"), printable.map(lambda t: "?" + t)),
)
allow_lists = st.sampled_from([None, frozenset(), frozenset({"example.com", "www.example.com", "a.b.com"})])


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(normal, normal, fastish, url(), common, st.integers(), st.none()), max_size=12),
       allow_lists)
@example(["https://example.com/a", "https://example.com/a", "https://EXAMPLE.com/a", 7], None)
@example(["https://example.com/" + "p" * (MAX_URL_LENGTH - len("https://example.com/") + 1)], None)
@example(["https://a.localhost/", "https://xn--bcher-kva.example/", "https://example.123/"], None)
@example(["https://example.com/", "https://other.example.org/"], frozenset({"example.com"}))
def test_check_urls_equals_check_url_one_by_one(values: list[object], allowed: frozenset[str] | None) -> None:
    good, hosts, refused = check_urls(values, allowed)
    assert (good, hosts, refused) == one_by_one(values, allowed)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(normal, normal, query_heavy, fastish, url(), common, st.integers()), max_size=12),
       allow_lists, st.sampled_from([TRACKING, NAMES_ONLY, KEEP_ALL_PARAMS]))
@example(["https://example.com/a?utm_source=x", "https://example.com/a", "https://example.com/a?p=1&gclid=2"],
         None, TRACKING)
@example(["https://example.com/%7Ea", "https://example.com/~a"], None, KEEP_ALL_PARAMS)
def test_check_urls_equals_check_url_one_by_one_with_a_parameter_filter(
        values: list[object], allowed: frozenset[str] | None, strip: QueryFilter) -> None:
    assert check_urls(values, allowed, strip) == one_by_one(values, allowed, strip)


def test_the_short_cut_takes_the_common_urls() -> None:
    """Otherwise the property above would prove nothing about it."""
    for value in ["https://www.example.com/articles/1?page=2", "http://example.org/", "https://r4---sn-x.example.com/x"]:
        match = _NORMAL_RE.fullmatch(value)
        assert match is not None and _judge_host(match[1], None) == match[1], value
    for value in ["https://Example.com/", "https://example.com", "https://example.com:8443/", "https://example.com/#a",
                  "https://example.com/p?"]:
        assert _NORMAL_RE.fullmatch(value) is None, value
