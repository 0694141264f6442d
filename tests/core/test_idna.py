"""SPEC §12 / issue 10.2: the host is mapped with UTS #46 before any check; ASCII is stored and sent."""

from __future__ import annotations

import re

import pytest
from flask import Flask

from flask_indexnow import IndexNow, InvalidURLError
from flask_indexnow.config import load_settings
from flask_indexnow.delivery.endpoint import endpoint_problem
from flask_indexnow.urls import check_host, check_url

from ..conftest import KEY, rows

pytestmark = pytest.mark.every_backend  # the upsert and the URL hash differ by database

#: Each is a private address or a local name to a browser (UTS #46 maps it so),
#: and each was accepted and POSTed before the mapping came first.
ATTACKS = [
    "http://127.0.0.\uff11/",  # full-width digit one
    "http://\uff11\uff12\uff17.\uff10.\uff10.\uff11/",  # all full-width
    "http://127.0.0\u30021/",  # ideographic full stop as a dot
    "http://127.0.0.\u00ad1/",  # soft hyphen: ignored by the mapping
    "http://169.254.169.\uff12\uff15\uff14/",  # the cloud metadata address
    "http://169.254.169.25\u200b4/",  # zero-width space: ignored
    "http://a.\uff4c\uff4f\uff43\uff41\uff4c\uff48\uff4f\uff53\uff54/",  # full-width "localhost"
    "http://metadata.google\u3002internal/",
]


def ext(app: Flask) -> IndexNow:
    return app.extensions["indexnow"].extension  # type: ignore[no-any-return]


@pytest.mark.parametrize("url", ATTACKS)
def test_unicode_spellings_of_private_hosts_are_refused(url: str) -> None:
    with pytest.raises(InvalidURLError, match="not a public address|reserved for local use"):
        check_url(url)  # no allow-list at all: the refusal comes from the address rules


@pytest.mark.parametrize("backend", ["sqlite"])
def test_an_open_allow_list_queues_none_of_them(make_app) -> None:
    app = make_app(INDEXNOW_ALLOWED_HOSTS="*")
    with app.app_context():
        result = ext(app).enqueue_many(ATTACKS)
        for url in ATTACKS:
            with pytest.raises(InvalidURLError):
                ext(app).enqueue(url)
    assert result.queued == 0 and [url for url, _ in result.rejected] == ATTACKS
    assert all(re.search("not a public address|reserved for local use", why) for _, why in result.rejected)
    assert rows(app) == []


@pytest.mark.parametrize("host", ["127.0.0.\uff11", "\uff11\uff12\uff17.1", "[::1]", "localhost\u3002"])
def test_endpoint_on_a_unicode_private_host_is_not_public(host: str) -> None:
    settings = load_settings({"INDEXNOW_ENDPOINT": f"https://{host}/indexnow"})
    problem = endpoint_problem(settings)
    assert problem is not None and "not a public host" in problem


def test_public_endpoint_is_still_fine() -> None:
    assert endpoint_problem(load_settings({})) is None


@pytest.mark.parametrize(
    ("url", "expected", "host"),
    [
        ("https://B\u00fccher.example/seite#x", "https://xn--bcher-kva.example/seite", "xn--bcher-kva.example"),
        ("https://B\u00dcCHER.EXAMPLE/seite", "https://xn--bcher-kva.example/seite", "xn--bcher-kva.example"),
        ("https://xn--bcher-kva.example/seite", "https://xn--bcher-kva.example/seite", "xn--bcher-kva.example"),
        ("https://XN--BCHER-KVA.example/seite", "https://xn--bcher-kva.example/seite", "xn--bcher-kva.example"),
        ("https://b\u00fccher\u3002example/seite", "https://xn--bcher-kva.example/seite", "xn--bcher-kva.example"),
        ("https://www.exam\u00adple.com/", "https://www.example.com/", "www.example.com"),
        ("https://\uff45\uff58\uff41\uff4d\uff50\uff4c\uff45.com/", "https://example.com/", "example.com"),
        ("https://stra\u00dfe.de/", "https://xn--strae-oqa.de/", "xn--strae-oqa.de"),  # no transitional ß → ss
        ("https://\uff18.\uff18.\uff18.\uff18/", "https://8.8.8.8/", "8.8.8.8"),
    ],
)
def test_host_is_stored_in_its_ascii_form(url: str, expected: str, host: str) -> None:
    assert check_url(url) == (expected, host)


@pytest.mark.parametrize(
    "host",
    [
        "xn--abc.example",  # punycode that decodes to control characters
        "xn--.example",  # no punycode at all
        "xn---bbk.example",  # a non-canonical spelling of another label
        "\u0300a.example",  # a label that starts with a combining mark
        "\U0001f4a9.example",  # a symbol IDNA 2008 does not allow
        "a\u2488.example",  # "⒈" (digit one, full stop) is disallowed by UTS #46
    ],
)
def test_invalid_idna_is_a_clear_invalid_url_error(host: str) -> None:
    with pytest.raises(InvalidURLError, match=r"^host .* is not a valid"):
        check_url(f"https://{host}/")


def test_check_host_and_its_cache_see_the_same_host_in_every_spelling() -> None:
    assert check_host("B\u00fccher.example") == check_host("xn--bcher-kva.example") == "xn--bcher-kva.example"


def test_spellings_of_one_host_are_one_queue_row_and_sent_in_ascii(make_app, endpoint) -> None:
    """Dedup holds across spellings; the engine gets the punycode host and URL."""
    app = make_app(INDEXNOW_ALLOWED_HOSTS=["b\u00fccher.example"])
    spellings = [
        "https://B\u00fccher.example/seite#x",
        "https://xn--bcher-kva.example/seite",
        "https://BÜCHER.example/seite",
        "https://b\u00fc\u00adcher\uff0eexample/seite",  # soft hyphen and a full-width full stop
    ]
    with app.app_context():
        ext(app).enqueue(spellings[0])
        result = ext(app).enqueue_many(spellings[1:])
        assert result.rejected == []
    assert [(r.host, r.url) for r in rows(app)] == [("xn--bcher-kva.example", "https://xn--bcher-kva.example/seite")]
    with app.app_context():
        ext(app).process_queue()
    assert len(endpoint.received) == 1
    body = endpoint.received[0].json
    assert body["host"] == "xn--bcher-kva.example"
    assert body["urlList"] == ["https://xn--bcher-kva.example/seite"]
    assert body["keyLocation"] == f"https://xn--bcher-kva.example/{KEY}.txt"


def test_allow_list_and_keys_are_compared_in_ascii() -> None:
    settings = load_settings({
        "INDEXNOW_ALLOWED_HOSTS": ["B\u00fccher.example", "WWW.Example.com."],
        "INDEXNOW_KEYS": {"m\u00fcnchen.example": KEY},
    })
    assert settings.allowed_hosts == frozenset({"xn--bcher-kva.example", "www.example.com"})
    assert dict(settings.keys) == {"xn--mnchen-3ya.example": KEY}
    assert check_url("https://b\u00fccher.example/", settings.allowed_hosts).host == "xn--bcher-kva.example"
