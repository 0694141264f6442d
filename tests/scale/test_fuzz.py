"""Fuzzing the edges where outside input comes in (SPEC §3).

``urls.check_url`` gets random text and random URL-shaped strings: it either
returns a URL that passes its own checks again, or raises
:class:`InvalidURLError`; nothing else. The event signals get random
arguments of every type: they never raise into the sender, and whatever they
queue is a valid URL.
"""

from __future__ import annotations

import ipaddress
from datetime import date, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flask_indexnow import InvalidURLError, signals
from flask_indexnow.urls import check_url

from ..conftest import rows
from .conftest import ext

# -- URL-shaped text ----------------------------------------------------------

label = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?", fullmatch=True)
ipv4 = st.ip_addresses(v=4).map(str)
ipv4_numeric = st.integers(0, 2**32 - 1).map(str) | st.integers(0, 2**32 - 1).map(hex)
ipv6 = st.ip_addresses(v=6).map(lambda a: f"[{a}]")
host = st.one_of(
    st.lists(label, min_size=1, max_size=4).map(".".join),
    ipv4, ipv4_numeric, ipv6,
    st.sampled_from(["localhost", "a.localhost", "metadata.google.internal", "127.1", "0x7f.1", "[::1]",
                     "[::ffff:10.0.0.1]", "example.com.", "EXAMPLE.com", "bücher.example", "xn--bcher-kva.example",
                     "exa mple.com", "", "[", "[::1", "a..b", ".com"]),
    st.text(max_size=20),
)
url_like = st.builds(
    lambda scheme, userinfo, host, port, path, query, fragment: (
        f"{scheme}{userinfo}{host}{port}{path}{query}{fragment}"
    ),
    st.sampled_from(["http://", "https://", "HTTP://", "ftp://", "javascript:", "//", "", "http:/", "https:"]),
    st.sampled_from(["", "", "", "user@", "user:pass@", "@"]),
    host,
    st.one_of(st.just(""), st.integers(-5, 70000).map(lambda p: f":{p}"), st.just(":"), st.text(max_size=5).map(lambda t: ":" + t)),
    st.one_of(st.just(""), st.text(max_size=30).map(lambda t: "/" + t)),
    st.one_of(st.just(""), st.text(max_size=20).map(lambda t: "?" + t)),
    st.one_of(st.just(""), st.text(max_size=10).map(lambda t: "#" + t)),
)
good_url = st.builds(lambda name, path: f"https://{name}.example.com/{path}", label,
                     st.from_regex(r"[a-z0-9/._-]{0,20}", fullmatch=True))
anything = st.one_of(st.none(), st.integers(), st.floats(), st.binary(max_size=20), st.booleans(),
                     st.lists(st.text(max_size=5), max_size=3), st.text(max_size=2100))


def assert_valid(url: str) -> None:
    """What a URL that passed must look like, checked independently of the validator."""
    checked = check_url(url)
    again = check_url(checked.url)
    assert again == checked, "check_url is not idempotent"
    assert checked.url.startswith(("http://", "https://"))
    assert "#" not in checked.url
    assert "@" not in checked.url.split("/", 3)[2]
    name = checked.host
    assert name != "localhost" and not name.endswith((".localhost", ".internal"))
    literal = name[1:-1] if name.startswith("[") else name
    try:
        address = ipaddress.ip_address(literal)
    except ValueError:
        assert "." in name
        return
    assert address.is_global and not address.is_private and not address.is_loopback


def test_check_url_accepts_valid_urls_and_refuses_the_rest_with_invalid_url_error() -> None:
    outcomes = {"accepted": 0, "refused": 0}

    @settings(max_examples=1500, deadline=None, derandomize=True)
    @given(st.one_of(good_url, url_like, st.text(max_size=200), anything))
    def validate(value: Any) -> None:
        try:
            check_url(value)
        except InvalidURLError:
            outcomes["refused"] += 1
            return
        outcomes["accepted"] += 1
        assert_valid(value)

    validate()
    assert outcomes["accepted"] and outcomes["refused"]  # both paths were explored


# -- signal arguments -------------------------------------------------------------

aware = st.datetimes(timezones=st.sampled_from([timezone.utc, timezone(timedelta(hours=14)),
                                                timezone(timedelta(hours=-12))]))
when = st.one_of(st.none(), st.datetimes(), aware, st.dates(), st.just(datetime.max), st.just(datetime.min),
                 st.text(max_size=10), st.integers())
flag = st.one_of(st.none(), st.booleans(), st.integers(-2, 2), st.text(max_size=3), st.floats())


class Page:
    """A watched resource whose adapter functions may return anything, or raise."""

    def __init__(self, url: Any, published: Any, raises: bool) -> None:
        self.url = url
        self.published = published
        self.raises = raises


class Other:
    """A resource of a class nobody watches."""


def read(page: Page, value: Any) -> Any:
    if page.raises:
        raise RuntimeError("the site's own code failed")
    return value


resource = st.one_of(
    st.none(), st.builds(Other), st.integers(), st.text(max_size=5),
    st.builds(Page, st.one_of(good_url, url_like, anything), flag, st.booleans()),
)
signal = st.sampled_from([signals.resource_saved, signals.resource_published, signals.resource_unpublished,
                          signals.resource_before_delete, signals.resource_deleted])
arguments = st.fixed_dictionaries(
    {},
    optional={
        "resource": resource,
        "url": st.one_of(good_url, url_like, anything),
        "published": flag,
        "published_at": when,
        "deleted": flag,
        "session": st.one_of(st.none(), st.integers(), st.text(max_size=3)),
    },
)


def test_signals_never_raise_whatever_they_are_sent(make_app):
    app = make_app()
    ext(app).watch(Page, url=lambda p: read(p, p.url), published=lambda p: read(p, p.published),
                   published_at=lambda p: read(p, None))

    @settings(max_examples=400, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(st.lists(st.tuples(signal, st.sampled_from(["app", "none", "other"]), arguments), max_size=5))
    def events(sent: list[tuple[Any, str, dict[str, Any]]]) -> None:
        for sig, sender, kwargs in sent:
            target = {"app": app, "none": None, "other": object()}[sender]
            sig.send(target, **kwargs)  # must not raise, with or without an app context
            with app.app_context():
                sig.send(target, **kwargs)

    events()
    queued = rows(app, "Queue")
    assert queued  # the random events did reach the queue, not only the error paths
    for row in queued:  # whatever got in is a valid, normalised URL
        assert check_url(row.url) == (row.url, row.host)
        assert row.action in ("update", "delete")


@pytest.mark.every_backend  # each database has its own datetime range
def test_a_far_future_publication_date_is_queued_not_raised(app):
    """A regression the fuzzing above is aimed at: extreme dates must not break a save."""
    signals.resource_saved.send(app, url="https://example.com/a", published=True, published_at=datetime.max)
    signals.resource_saved.send(app, url="https://example.com/b", published=True, published_at=date.max)
    queued = {row.url: row.available_at.year for row in rows(app, "Queue")}
    assert queued == {"https://example.com/a": 9999, "https://example.com/b": 9999}
