"""Which URLs may be submitted, decided without any DNS look-up.

A URL queued here ends up in a POST to a search engine and, for ``key check``
and remote sitemaps, in a request this process makes itself. So the rules are
strict: absolute http(s) only, no credentials, and no host that points into a
private network, written in any form a URL parser would accept (``127.1``,
``2130706433``, ``0x7f.1``, ``[::ffff:10.0.0.1]`` …).

The host is mapped with UTS #46 (the IDNA mapping browsers use) *before* any
check: ``１２７.０.０.１``, ``127.0.0。1`` or ``127.0.0.1`` with a soft hyphen
before the last digit are the loopback address to a browser, so they are to
us too. Every check then runs on the ASCII (punycode) result, which is also
the form stored and sent.

:func:`check_url` first tries a fast path for the common well-formed ASCII URL
(a regular expression and a few string operations); whatever it does not
recognise goes through the full check, which is the reference: the fast path
gives exactly its result (``tests/core/test_url_fastpath.py`` proves it).

The normal form makes dedup independent of spelling: ``https://example.org:443/%7Ea``,
``https://example.org/~a`` and ``https://example.org/~a?utm_source=x`` are one
URL. The default port is dropped, percent-escapes of unreserved characters are
decoded and the others upper-cased (a stray ``%`` becomes ``%25``), non-ASCII
characters in path and query (bidi marks and C1 controls among them) are
percent-encoded as UTF-8, and tracking parameters (:class:`QueryFilter`,
INDEXNOW_STRIP_QUERY_PARAMS) are dropped; the others keep their order.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from collections.abc import Collection, Iterable
from typing import NamedTuple
from urllib.parse import quote, urlsplit, urlunsplit

import idna

from .errors import InvalidURLError

#: The sitemap protocol's limit, and the size of the ``url`` columns; search
#: engines ignore longer URLs. Checked on the normalised (stored) form.
MAX_URL_LENGTH = 2048
#: The size of the ``host`` columns. A DNS name is at most 253 characters, so
#: every accepted host fits; the check on the stored form makes sure of it.
MAX_HOST_LENGTH = 255
#: Text longer than this is refused before it is parsed at all: normalisation
#: can shorten a URL (a dropped fragment, ignorable characters in the host) but
#: never by this much, and nobody's URL needs it.
MAX_INPUT_LENGTH = 4 * MAX_URL_LENGTH
#: ``INDEXNOW_ALLOWED_HOSTS = "*"``: any public host may be queued.
ANY_HOST = "*"
#: What to tell a site owner whose app has no allow-list at all.
NO_ALLOWED_HOSTS = (
    "no allowed hosts are configured, so no URL may be queued: set INDEXNOW_ALLOWED_HOSTS "
    "(or INDEXNOW_BASE_URL or SERVER_NAME) to your site's host, or INDEXNOW_ALLOWED_HOSTS = '*' "
    "to accept any public host"
)

_FORBIDDEN_SUFFIXES = (".localhost", ".internal")
_FORBIDDEN_HOSTS = {"localhost"}
_LABEL_RE = re.compile(r"(?!-)[a-z0-9_-]{1,63}(?<!-)")
_IPV4_PART_RE = re.compile(r"0x[0-9a-f]*|0[0-7]*|[1-9][0-9]*")
_NUMERIC_LABEL_RE = re.compile(r"0x[0-9a-f]*|[0-9]+")
_CONTROL_RE = re.compile(r"[\x00-\x20\x7f]")
#: The common well-formed URL: lower-case http(s), a host of ASCII letters,
#: digits, dots and hyphens (:data:`_FAST_HOST_RE` says which of them are
#: names the fast path takes), an optional port without leading zeros, then
#: path, query and fragment of printable ASCII (the fragment may be any text
#: but controls). Everything else (IP literals, punycode, underscores, a
#: trailing dot, an empty query, user info …) takes the full path. The host is
#: the longest run of its characters after ``://`` (none of them may follow
#: it), so splitting the check in two takes exactly the URLs one pattern would.
_FAST_RE = re.compile(
    r"(https?)://([a-zA-Z0-9.-]+)"
    r"(?::([1-9][0-9]{0,4}))?"
    r"(/[!-\"$->@-~]*)?"  # path: printable ASCII but '#' and '?'
    r"(\?[!-\"$-~]+)?"  # query: printable ASCII but '#', not empty
    r"(#[^\x00-\x20\x7f]*)?"
)
#: The common URL already in its normalised form, the short cut of
#: :func:`check_urls`: what :data:`_FAST_RE` takes with a lower-case host, a
#: path, and neither port nor fragment (:func:`check_urls` also asks
#: :data:`_ESCAPE_FIX` and the parameter filter whether anything would change).
_NORMAL_RE = re.compile(r"https?://([a-z0-9.-]+)/[!-\"$->@-~]*(?:\?[!-\"$-~]+)?")
#: A DNS name of ASCII letters, digits and hyphens whose last label starts with
#: a letter (so it is no number).
_FAST_HOST_RE = re.compile(
    r"(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\.)+[a-zA-Z](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?"
)


#: A percent-escape, or a ``%`` that starts none.
_ESCAPE_RE = re.compile(r"%([0-9A-Fa-f]{2})?")
#: What :data:`_ESCAPE_RE`'s rewrite would change: a ``%`` not followed by two upper-case hex
#: digits, or the escape of an unreserved character. One C-level search, so text whose escapes
#: are already in normal form (nearly all of it) is never rewritten.
_ESCAPE_FIX = re.compile(r"%(?![0-9A-F]{2})|%(?:3[0-9]|[46][1-9A-F]|[57][0-9A]|2[DE]|5F|7E)").search
#: RFC 3986's unreserved characters: their escapes mean the same as the characters themselves.
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
#: The parameter patterns INDEXNOW_STRIP_QUERY_PARAMS takes: a name, or a name's start then ``*``.
_PARAM_PATTERN_RE = re.compile(r"(?:(?![=&#*%])[!-~])+\*?")


class QueryFilter:
    """Which query parameters are dropped from every URL: names, and name prefixes ending in ``*``.

    Built once from INDEXNOW_STRIP_QUERY_PARAMS. Names are compared exactly
    (case matters, as it does to the sites that read them), after percent-escapes
    of unreserved characters are decoded. :meth:`may_strip` is one regular
    expression search, so a URL without a tracking parameter costs almost nothing.
    """

    __slots__ = ("_name", "find", "find_from", "patterns")

    def __init__(self, patterns: Iterable[str] = ()) -> None:
        self.patterns = tuple(patterns)
        for pattern in self.patterns:
            if not isinstance(pattern, str) or not _PARAM_PATTERN_RE.fullmatch(pattern):
                raise ValueError(f"{pattern!r} is not a query parameter name (or a name's start followed by '*')")
        alternatives = "|".join(
            re.escape(p[:-1]) + "[^&=]*" if p.endswith("*") else re.escape(p) for p in self.patterns
        )
        #: Searches a query for a parameter to drop (None: every parameter is kept).
        self.find = re.compile(rf"(?:^|&)(?:{alternatives})(?:[=&]|\Z)").search if self.patterns else None
        #: The same search in a whole URL without fragment, from the position of its ``?``.
        self.find_from = re.compile(rf"[?&](?:{alternatives})(?:[=&]|\Z)").search if self.patterns else None
        self._name = re.compile(alternatives).fullmatch if self.patterns else None

    def may_strip(self, query: str) -> bool:
        """Whether ``query`` (normalised escapes) holds a parameter to drop."""
        return self.find is not None and self.find(query) is not None

    def strip(self, query: str) -> str:
        """``query`` without the parameters to drop; the others keep their order (and spelling)."""
        return self.drop(query) if self.may_strip(query) else query

    def drop(self, query: str) -> str:
        """:meth:`strip` for a query :meth:`may_strip` said yes to."""
        name = self._name
        if name is None:
            return query
        return "&".join(part for part in query.split("&") if name(part.split("=", 1)[0]) is None)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, QueryFilter) and other.patterns == self.patterns

    def __hash__(self) -> int:
        return hash(self.patterns)

    def __repr__(self) -> str:
        return f"QueryFilter({self.patterns!r})"


#: Keeps every parameter.
KEEP_ALL_PARAMS = QueryFilter()


def _escape_normal(match: re.Match[str]) -> str:
    hex_digits = match[1]
    if hex_digits is None:
        return "%25"  # a '%' that escapes nothing: itself, escaped (so it can never start one later)
    char = chr(int(hex_digits, 16))
    return char if char in _UNRESERVED else "%" + hex_digits.upper()


def _encode_non_ascii(text: str) -> str:
    """``text`` with each non-ASCII character percent-encoded as UTF-8 (upper-case hex)."""
    if text.isascii():
        return text
    try:
        return quote(text, safe="".join(map(chr, range(0x21, 0x7F))))
    except UnicodeEncodeError:  # a lone surrogate: no UTF-8 for it
        raise InvalidURLError("URL holds a character that is not valid text (a lone surrogate)") from None


def _tidy(path: str, query: str, strip: QueryFilter) -> tuple[str, str]:
    """``path`` and ``query`` in normal form (both printable ASCII already)."""
    if "%" in path and _ESCAPE_FIX(path) is not None:
        path = _ESCAPE_RE.sub(_escape_normal, path)
    if query:
        if "%" in query and _ESCAPE_FIX(query) is not None:
            query = _ESCAPE_RE.sub(_escape_normal, query)
        find = strip.find
        if find is not None and find(query) is not None:
            query = strip.drop(query)
    return path, query


def _netloc(scheme: str, host: str, port: int | None) -> str:
    """``host[:port]``, without the scheme's default port; port 0 is refused."""
    if port is None or (port == 443 and scheme == "https") or (port == 80 and scheme == "http"):
        return host
    if port == 0:
        raise InvalidURLError("URL has port 0, which no server listens on")
    return f"{host}:{port}"


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
    if not 1 <= len(parts) <= 4 or not all(_IPV4_PART_RE.fullmatch(p) for p in parts):
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


def _to_ascii(host: str) -> str:
    """Map ``host`` with UTS #46 and return its ASCII form, labels unchecked.

    The mapping is what a browser does to a host: lower case, full-width and
    other compatibility forms folded (``１`` → ``1``, ``。`` → ``.``), ignorable
    characters (soft hyphen, zero-width space) removed. A label that is still
    not plain ASCII is converted to punycode with the IDNA 2008 rules, and an
    ``xn--`` label must be valid punycode. Plain ASCII labels keep the rules
    checked afterwards (letters, digits, ``-`` and ``_``), as browsers do
    (UTS #46 with CheckHyphens and UseSTD3ASCIIRules off).
    """
    try:
        mapped = idna.uts46_remap(host, std3_rules=False)
    except UnicodeError as exc:  # idna.IDNAError is a UnicodeError
        raise InvalidURLError(f"host {host!r} is not a valid name: {exc}") from None
    labels = mapped.split(".")
    for index, label in enumerate(labels):
        if label.isascii() and not label.startswith("xn--"):
            continue
        try:
            labels[index] = idna.alabel(label).decode("ascii")
            # One spelling per name (RFC 5891 §5.3; older idna releases do not check it).
            if label.startswith("xn--") and idna.alabel(idna.ulabel(label)).decode("ascii") != label:
                raise idna.IDNAError("the A-label is not the canonical punycode of its name")
        except UnicodeError as exc:
            raise InvalidURLError(f"host {host!r} is not a valid internationalised name: {exc}") from None
    return ".".join(labels)


def canonical_host(host: str) -> str:
    """Return the form ``host`` is stored and compared in, or raise :class:`InvalidURLError`.

    Only the spelling is judged here: IPv6 literals compressed in brackets,
    numeric IPv4 forms as dotted quads, names mapped to ASCII (punycode) with
    no trailing dot. Whether the host may be *submitted* (public, not
    ``localhost``, …) is :func:`check_host`'s question; the configuration uses
    this function to compare its host lists with the URLs' hosts.
    """
    if host.startswith("["):
        if not host.endswith("]") or not host.isascii():
            raise InvalidURLError(f"host {host!r} is not a valid IPv6 literal")
        literal = host[1:-1].split("%", 1)[0]
        try:
            return f"[{ipaddress.IPv6Address(literal).compressed}]"
        except ValueError:
            raise InvalidURLError(f"host {host!r} is not a valid IPv6 literal") from None
    ascii_host = _to_ascii(host)
    if ascii_host.endswith(".") and not ascii_host.endswith(".."):
        ascii_host = ascii_host[:-1]
    if not ascii_host:
        raise InvalidURLError("URL has no host")
    labels = ascii_host.split(".")
    if _NUMERIC_LABEL_RE.fullmatch(labels[-1]):
        return str(_parse_ipv4(ascii_host))
    if len(ascii_host) > 253 or not all(_LABEL_RE.fullmatch(label) for label in labels):
        raise InvalidURLError(f"host {host!r} is not a valid name")
    return ascii_host


@functools.lru_cache(maxsize=4096)
def check_host(host: str) -> str:
    """Return ``host`` normalised (:func:`canonical_host`) if it may be submitted, or raise.

    Accepts public DNS names with at least one dot and globally routable IP
    literals (IPv6 in brackets); loopback, private, link-local, reserved and
    the other non-public ranges and local names are refused, in
    whatever spelling UTS #46 maps to it. Cached: a bulk enqueue or a sitemap
    repeats a handful of hosts thousands of times (a refusal raises, so it is
    never cached).
    """
    canonical = canonical_host(host)
    if canonical.startswith("["):
        if not _is_public(ipaddress.IPv6Address(canonical[1:-1])):
            raise InvalidURLError(f"host {canonical} is not a public address")
        return canonical
    if _NUMERIC_LABEL_RE.fullmatch(canonical.rsplit(".", 1)[-1]):
        if not _is_public(ipaddress.IPv4Address(canonical)):
            raise InvalidURLError(f"host {canonical} is not a public address")
        return canonical
    if canonical in _FORBIDDEN_HOSTS or canonical.endswith(_FORBIDDEN_SUFFIXES):
        raise InvalidURLError(f"host {canonical} is reserved for local use")
    if "." not in canonical:
        raise InvalidURLError(f"host {canonical!r} has no dot: not a public name")
    if len(canonical) > MAX_HOST_LENGTH:  # cannot happen for a valid name; the column decides
        raise InvalidURLError(f"host is longer than {MAX_HOST_LENGTH} characters")
    return canonical


def check_url(
    url: object, allowed_hosts: Collection[str] | None = None, strip: QueryFilter = KEEP_ALL_PARAMS
) -> CheckedURL:
    """Validate ``url`` for submission and return it normalised, with its host.

    The fragment is dropped (engines ignore it, and it would defeat dedup); the
    scheme is lower-cased and the host mapped to its ASCII form
    (:func:`canonical_host`); port, escapes and non-ASCII characters take the
    normal form (module docs) and ``strip``'s parameters are dropped (the queue
    passes INDEXNOW_STRIP_QUERY_PARAMS; the default keeps them all). The normalised URL is at most
    :data:`MAX_URL_LENGTH` characters: exactly what is stored and sent.
    ``allowed_hosts``, when given, is the complete list of hosts the site may
    submit, in canonical form; an empty one refuses every URL
    with a message naming the settings to set. None accepts any public host.
    Raises :class:`InvalidURLError` with a reason a person can act on.
    """
    if not isinstance(url, str):
        raise InvalidURLError(f"URL must be a string, got {type(url).__name__}")
    checked = _fast_check(url, strip) or _full_check(url, strip)
    if allowed_hosts is not None and checked.host not in allowed_hosts:
        if not allowed_hosts:
            raise InvalidURLError(NO_ALLOWED_HOSTS)
        raise InvalidURLError(f"host {checked.host} is not in INDEXNOW_ALLOWED_HOSTS")
    return checked


def check_urls(
    urls: Iterable[object], allowed_hosts: Collection[str] | None = None, strip: QueryFilter = KEEP_ALL_PARAMS
) -> tuple[list[str], list[str], list[tuple[str, str]]]:
    """:func:`check_url` for many URLs: the normalised URLs, their hosts, and the refused ones.

    The refused come as ``(str(input), reason)``, in input order. Built for
    ``enqueue_many``: a URL already in its normalised form (the common case:
    :data:`_NORMAL_RE`) costs one match and one look-up of its host, which is
    judged once per call, as the fast path judges it; every other URL goes
    through :func:`check_url` itself, so the results are the same
    (``tests/core/test_url_fastpath.py`` proves it).
    """
    good: list[str] = []
    hosts: list[str] = []
    refused: list[tuple[str, str]] = []
    fullmatch = _NORMAL_RE.fullmatch
    judged: dict[str, str] = {}  # host -> itself when the short cut may take it, else ""
    find = strip.find_from  # None: every parameter is kept
    for url in urls:
        match = fullmatch(url) if type(url) is str else None
        if match is not None and ("%" not in match.string or _ESCAPE_FIX(match.string) is None) and (
                find is None or (query := match.string.find("?")) < 0 or find(match.string, query) is None):
            raw = match[1]
            host = judged.get(raw)
            if host is None:
                host = judged[raw] = _judge_host(raw, allowed_hosts)
            if host and len(match.string) <= MAX_URL_LENGTH:
                good.append(match.string)
                hosts.append(host)
                continue
        try:
            checked = check_url(url, allowed_hosts, strip)
        except InvalidURLError as exc:
            refused.append((str(url), str(exc)))
            continue
        good.append(checked.url)
        hosts.append(checked.host)
    return good, hosts, refused


def _judge_host(raw: str, allowed_hosts: Collection[str] | None) -> str:
    """``raw`` (lower case) if the short cut of :func:`check_urls` may take it, else ""."""
    host = _fast_host(raw)
    if host is None or (allowed_hosts is not None and host not in allowed_hosts):
        return ""
    return host


@functools.lru_cache(maxsize=4096)
def _fast_host(raw: str) -> str | None:
    """The canonical form of a host the fast path matched, or None to take the full path."""
    if len(raw) > 253 or _FAST_HOST_RE.fullmatch(raw) is None:
        return None
    host = raw.lower()
    if "xn--" in host or host.endswith(_FORBIDDEN_SUFFIXES):
        return None
    return host


def _fast_check(url: str, strip: QueryFilter = KEEP_ALL_PARAMS) -> CheckedURL | None:
    """:func:`_full_check`'s result for a common well-formed URL, or None to take the full path.

    Never refuses: anything unusual is left to the full check, so both paths
    refuse the same URLs with the same messages.
    """
    match = _FAST_RE.fullmatch(url)
    if match is None or len(url) > MAX_INPUT_LENGTH:
        return None
    scheme, raw, port, path, query, _ = match.groups()
    host = _fast_host(raw)
    if host is None:
        return None
    if port is not None and int(port) > 65535:
        return None
    if (port == "443" and scheme == "https") or (port == "80" and scheme == "http"):
        port = None
    path, query = path or "/", query or ""
    if "%" in url or query:
        path, bare = _tidy(path, query[1:], strip)
        query = "?" + bare if bare else ""
    normalised = f"{scheme}://{host}{'' if port is None else ':' + port}{path}{query}"
    if len(normalised) > MAX_URL_LENGTH:
        return None
    return CheckedURL(normalised, host)


def _full_check(url: str, strip: QueryFilter = KEEP_ALL_PARAMS) -> CheckedURL:
    """The reference check: parse, map the host, apply every rule, normalise."""
    url = url.strip()
    if not url:
        raise InvalidURLError("URL is empty")
    if len(url) > MAX_INPUT_LENGTH:
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
    netloc = _netloc(scheme, host, port)
    path, query = _tidy(_encode_non_ascii(parts.path or "/"), _encode_non_ascii(parts.query), strip)
    normalised = urlunsplit((scheme, netloc, path, query, ""))
    if len(normalised) > MAX_URL_LENGTH:
        raise InvalidURLError(f"URL is longer than {MAX_URL_LENGTH} characters")
    return CheckedURL(normalised, host)
