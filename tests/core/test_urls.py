"""SPEC §3 URL validation: every host class, every numeric form, no DNS."""

from __future__ import annotations

import socket

import pytest

from flask_indexnow import InvalidURLError
from flask_indexnow.urls import MAX_URL_LENGTH, check_url


@pytest.mark.parametrize(
    ("url", "expected", "host"),
    [
        ("https://example.com/a", "https://example.com/a", "example.com"),
        ("https://Example.COM/a#frag", "https://example.com/a", "example.com"),
        ("HTTP://example.com", "http://example.com/", "example.com"),
        ("https://example.com:8443/p?q=1", "https://example.com:8443/p?q=1", "example.com"),
        ("https://www.example.com./x", "https://www.example.com/x", "www.example.com"),
        ("https://8.8.8.8/x", "https://8.8.8.8/x", "8.8.8.8"),
        ("https://[2606:4700:4700::1111]/", "https://[2606:4700:4700::1111]/", "[2606:4700:4700::1111]"),
        # SPEC §12: ASCII host; §13: non-ASCII path percent-encoded as UTF-8
        ("https://bücher.de/straße", "https://xn--bcher-kva.de/stra%C3%9Fe", "xn--bcher-kva.de"),
        ("https://xn--bcher-kva.de/", "https://xn--bcher-kva.de/", "xn--bcher-kva.de"),
    ],
)
def test_valid_urls_are_normalised(url: str, expected: str, host: str) -> None:
    checked = check_url(url)
    assert checked.url == expected
    assert checked.host == host


@pytest.mark.parametrize(
    "url",
    [
        # schemes
        "ftp://example.com/", "javascript:alert(1)", "mailto:a@example.com", "//example.com/x", "example.com/x",
        "file:///etc/passwd", "data:text/html,hi",
        # credentials
        "https://user:pass@example.com/", "https://user@example.com/", "https://evil.com\\@example.com/",
        # names
        "http://localhost/", "http://LOCALHOST:8080/", "http://app.localhost/", "http://metadata.google.internal/",
        "http://db.internal/", "http://intranet/", "http://printer./",
        # IPv4 loopback/private/shared/link-local/reserved/multicast/unspecified
        "http://127.0.0.1/", "http://127.5.6.7/", "http://10.1.2.3/", "http://172.16.0.1/", "http://192.168.1.1/",
        "http://100.64.0.1/", "http://100.127.255.254/", "http://169.254.169.254/", "http://0.0.0.0/",
        "http://240.0.0.1/", "http://255.255.255.255/", "http://224.0.0.1/", "http://192.0.2.1/", "http://198.18.0.1/",
        # numeric IPv4 forms
        "http://2130706433/", "http://127.1/", "http://0x7f.1/", "http://0x7f000001/", "http://0177.0.0.1/",
        "http://017700000001/", "http://0/", "http://10.1/", "http://3232235777/",
        # malformed numeric hosts
        "http://1.2.3.4.5/", "http://256.1.1.1/", "http://example.123/", "http://1.2.3.09/",
        # IPv6
        "http://[::1]/", "http://[::]/", "http://[fe80::1]/", "http://[fe80::1%25eth0]/", "http://[fc00::1]/",
        "http://[fd12:3456::1]/", "http://[ff02::1]/", "http://[::ffff:127.0.0.1]/", "http://[::ffff:10.0.0.1]/",
        "http://[::ffff:7f00:1]/", "http://[2001:db8::1]/", "http://[64:ff9b::a00:1]/", "http://[2002:7f00:1::]/",
        "http://[not-an-ip]/", "http://[::1/",
        # malformed
        "", "   ", "https://", "https:///path", "https://exa mple.com/", "https://example.com/\x00",
        "https://example.com:99999/", "https://-bad-.com/", "https://a..b.com/",
        "https://example.com/" + "a" * MAX_URL_LENGTH,
    ],
)
def test_invalid_urls_are_refused(url: str) -> None:
    with pytest.raises(InvalidURLError):
        check_url(url)


@pytest.mark.parametrize("value", [None, 42, b"https://example.com/", ["https://example.com/"]])
def test_non_strings_are_refused(value: object) -> None:
    with pytest.raises(InvalidURLError):
        check_url(value)


def test_invalid_url_error_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        check_url("http://localhost/")


def test_allowed_hosts() -> None:
    assert check_url("https://example.com/", {"example.com"}).host == "example.com"
    with pytest.raises(InvalidURLError, match="ALLOWED_HOSTS"):
        check_url("https://evil.example.org/", {"example.com"})


def test_no_dns_lookup(monkeypatch: pytest.MonkeyPatch) -> None:
    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError("check_url must not resolve names")

    monkeypatch.setattr(socket, "getaddrinfo", forbidden)
    monkeypatch.setattr(socket, "gethostbyname", forbidden)
    assert check_url("https://does-not-exist.example.com/").host == "does-not-exist.example.com"
