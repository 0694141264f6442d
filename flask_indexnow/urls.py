"""Which URLs may be submitted, decided without any DNS look-up.

A URL queued here ends up in a POST to a search engine and, for ``key check``
and remote sitemaps, in a request this process makes itself. So the rules are
strict: absolute http(s) only, no credentials, and no host that points into a
private network, written in any form a URL parser would accept (``127.1``,
``2130706433``, ``0x7f.1``, ``[::ffff:10.0.0.1]`` …).
"""

from __future__ import annotations

import functools
import ipaddress
import re
from collections.abc import Collection
from typing import NamedTuple
from urllib.parse import urlsplit, urlunsplit

from .errors import InvalidURLError

#: The sitemap protocol's limit; search engines ignore longer URLs.
MAX_URL_LENGTH = 2048

_FORBIDDEN_SUFFIXES = (".localhost", ".internal")
_FORBIDDEN_HOSTS = {"localhost"}
_LABEL_RE = re.compile(r"^(?!-)[a-z0-9_-]{1,63}(?<!-)$")
_IPV4_PART_RE = re.compile(r"^(0x[0-9a-f]*|0[0-7]*|[1-9][0-9]*)$")
_NUMERIC_LABEL_RE = re.compile(r"^(0x[0-9a-f]*|[0-9]+)$")
_CONTROL_RE = re.compile(r"[\x00-\x20\x7f]")


class CheckedURL(NamedTuple):
    """A URL that passed :func:`check_url`, with the host it is grouped by."""

    url: str
    host: str


def _ipv4_part(part: str) -> int:
    if part.startswith("0x"):
        return int(part[2:] or "0", 16)
    if len(part) > 1 and part.startswith("0"):
        return int(part, 8)
    return int(part)


def _parse_ipv4(host: str) -> ipaddress.IPv4Address:
    """Parse the numeric IPv4 forms browsers and ``inet_aton`` accept.

    One to four parts, each decimal, octal (leading 0) or hex (0x); the last
    part fills the remaining bytes. Raises :class:`InvalidURLError` for a host
    that looks numeric but is no address, as the WHATWG URL standard does.
    """
    parts = host.split(".")
    if parts and parts[-1] == "":
        parts.pop()
    if not 1 <= len(parts) <= 4 or not all(_IPV4_PART_RE.match(p) for p in parts):
        raise InvalidURLError(f"host {host!r} is neither a name nor an IPv4 address")
    numbers = [_ipv4_part(p) for p in parts]
    *head, last = numbers
    if any(n > 255 for n in head) or last >= 256 ** (5 - len(parts)):
        raise InvalidURLError(f"host {host!r} is not a valid IPv4 address")
    value = last
    for index, number in enumerate(head):
        value += number << (8 * (3 - index))
    return ipaddress.IPv4Address(value)


def _is_public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address):
        mapped = address.ipv4_mapped or address.sixtofour
        if mapped is not None:
            return _is_public(mapped)
        if address in ipaddress.IPv6Network("64:ff9b::/96"):  # NAT64 embeds an IPv4 address
            return _is_public(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return address.is_global and not (
        address.is_multicast
        or address.is_private
        or address.is_reserved
        or address.is_loopback
        or address.is_link_local
        or address.is_unspecified
    )


@functools.lru_cache(maxsize=4096)
def check_host(host: str) -> str:
    """Return ``host`` normalised (lower case, no trailing dot) or raise.

    Accepts public DNS names with at least one dot and globally routable IP
    literals (IPv6 in brackets); loopback, private, link-local,
    reserved and the other non-public ranges are refused, in every spelling.
    Cached: a bulk enqueue or a sitemap repeats a handful of hosts thousands
    of times (a refusal raises, so it is never cached).
    """
    host = host.lower()
    if host.startswith("["):
        if not host.endswith("]"):
            raise InvalidURLError(f"host {host!r} is not a valid IPv6 literal")
        literal = host[1:-1].split("%", 1)[0]
        try:
            address6 = ipaddress.IPv6Address(literal)
        except ValueError:
            raise InvalidURLError(f"host {host!r} is not a valid IPv6 literal") from None
        if not _is_public(address6):
            raise InvalidURLError(f"host {host} is not a public address")
        return f"[{address6.compressed}]"
    host = host.rstrip(".") if host.endswith(".") and not host.endswith("..") else host
    if not host:
        raise InvalidURLError("URL has no host")
    labels = host.split(".")
    if _NUMERIC_LABEL_RE.match(labels[-1]):
        address4 = _parse_ipv4(host)
        if not _is_public(address4):
            raise InvalidURLError(f"host {host} is not a public address")
        return str(address4)
    if host in _FORBIDDEN_HOSTS or host.endswith(_FORBIDDEN_SUFFIXES):
        raise InvalidURLError(f"host {host} is reserved for local use")
    if "." not in host:
        raise InvalidURLError(f"host {host!r} has no dot: not a public name")
    try:
        ascii_host = host.encode("idna").decode("ascii") if not host.isascii() else host
    except UnicodeError:
        raise InvalidURLError(f"host {host!r} is not a valid name") from None
    if len(ascii_host) > 253 or not all(_LABEL_RE.match(label) for label in ascii_host.split(".")):
        raise InvalidURLError(f"host {host!r} is not a valid name")
    return host


def check_url(url: object, allowed_hosts: Collection[str] | None = None) -> CheckedURL:
    """Validate ``url`` for submission and return it normalised, with its host.

    The fragment is dropped (engines ignore it, and it would defeat dedup); the
    scheme and host are lower-cased. ``allowed_hosts``, when given, is the
    complete list of hosts the site may submit.
    Raises :class:`InvalidURLError` with a reason a person can act on.
    """
    if not isinstance(url, str):
        raise InvalidURLError(f"URL must be a string, got {type(url).__name__}")
    url = url.strip()
    if not url:
        raise InvalidURLError("URL is empty")
    if len(url) > MAX_URL_LENGTH:
        raise InvalidURLError(f"URL is longer than {MAX_URL_LENGTH} characters")
    if _CONTROL_RE.search(url):
        raise InvalidURLError("URL contains spaces or control characters")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise InvalidURLError(f"URL cannot be parsed: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise InvalidURLError(f"only http and https URLs can be submitted, got {scheme or 'no scheme'!r}")
    if "@" in parts.netloc:
        raise InvalidURLError("URL must not carry a user name or password")
    netloc_host = parts.netloc.rsplit(":", 1)[0] if port is not None or parts.netloc.endswith(":") else parts.netloc
    if not netloc_host:
        raise InvalidURLError("URL has no host")
    host = check_host(netloc_host)
    if allowed_hosts is not None and host not in allowed_hosts:
        raise InvalidURLError(f"host {host} is not in INDEXNOW_ALLOWED_HOSTS")
    netloc = host if port is None else f"{host}:{port}"
    path = parts.path or "/"
    return CheckedURL(urlunsplit((scheme, netloc, path, parts.query, "")), host)
