"""Issue 11.3: the fast path of ``check_url`` gives exactly the full check's result.

The full check (``_full_check``) is the reference. For every input, ``check_url``
(fast path first) must return the same normalised URL and host, or refuse with
the same message (``check_urls``, ``enqueue_many``'s short cut, is held to the
same reference in test_url_batch_check.py). The generators aim at the edges of the fast path's pattern:
Unicode and full-width hosts, hosts of digits and dots, ``xn--`` labels,
percent-escapes, ports, IPv6, empty queries, fragments, lengths around the limit.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from flask_indexnow import InvalidURLError
from flask_indexnow.urls import (
    KEEP_ALL_PARAMS,
    MAX_INPUT_LENGTH,
    MAX_URL_LENGTH,
    QueryFilter,
    _fast_check,
    _full_check,
    check_url,
)

#: INDEXNOW_STRIP_QUERY_PARAMS's default, and a filter of names only.
TRACKING = QueryFilter(("utm_*", "gclid", "fbclid", "msclkid", "mc_cid", "mc_eid", "_ga"))
NAMES_ONLY = QueryFilter(("ref", "a"))


def outcome(function, url: str, strip: QueryFilter = KEEP_ALL_PARAMS) -> tuple[str, object]:
    try:
        return ("ok", tuple(function(url, strip)))
    except InvalidURLError as exc:
        return ("refused", str(exc))


def assert_same(url: str, strip: QueryFilter = KEEP_ALL_PARAMS) -> None:
    fast = _fast_check(url, strip)
    full = outcome(_full_check, url, strip)
    if fast is not None:
        assert full == ("ok", tuple(fast)), f"the fast path accepted {url!r} as {fast}, the full check says {full}"
    assert outcome(lambda u, f: check_url(u, None, f), url, strip) == full


# -- hosts ---------------------------------------------------------------------

ascii_label = st.from_regex(r"[a-zA-Z0-9]([a-zA-Z0-9_-]{0,12}[a-zA-Z0-9])?", fullmatch=True)
tricky_label = st.sampled_from([
    "xn--bcher-kva", "XN--BCHER-KVA", "xn--abc", "xn--", "xn---bbk", "ab--cd", "r4---sn-x", "-a", "a-", "_dmarc",
    "0x7f", "0x", "0", "00", "017", "255", "256", "4294967295", "1e1", "a" * 63, "a" * 64, "localhost", "internal",
    "LOCALHOST", "b\u00fccher", "\uff4c\uff4f\uff43\uff41\uff4c\uff48\uff4f\uff53\uff54", "\uff11\uff12\uff17",
    "exa\u00admple", "exa\u200bmple", "ex%61mple", "%31", "stra\u00dfe", "\U0001f4a9", "\u0300a", "", " ", "a b",
])
unicode_label = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=8)
label = st.one_of(ascii_label, ascii_label, tricky_label, unicode_label)
dot = st.sampled_from([".", ".", ".", "\u3002", "\uff0e", "\uff61"])


@st.composite
def name(draw: st.DrawFn) -> str:
    labels = draw(st.lists(label, min_size=1, max_size=5))
    text = labels[0]
    for part in labels[1:]:
        text += draw(dot) + part
    if draw(st.booleans()):
        text += draw(st.sampled_from([".com", ".example", ".org", ".localhost", ".internal", ".123", ".0x1"]))
    if draw(st.integers(0, 9)) == 0:
        text += draw(st.sampled_from([".", "..", "\u3002"]))
    return text


tricky_ascii_label = tricky_label.filter(lambda t: t.isascii())


@st.composite
def ascii_name(draw: st.DrawFn) -> str:
    """Names the fast path's pattern nearly or fully matches: its edges are here."""
    labels = draw(st.lists(st.one_of(ascii_label, ascii_label, tricky_ascii_label), min_size=1, max_size=4))
    tld = draw(st.sampled_from(["com", "COM", "example", "localhost", "internal", "123", "0x1", "a1", "c-m", "_x"]))
    return ".".join([*labels, tld]) + draw(st.sampled_from(["", "", "", "", "."]))


digits_and_dots = st.lists(st.sampled_from(["0", "1", "2", "5", "7", "9", "x", "f", ".", "\uff11", "0x"]),
                           min_size=1, max_size=15).map("".join)
ipv4 = st.ip_addresses(v=4).map(str)
ipv6 = st.ip_addresses(v=6).map(lambda a: f"[{a}]") | st.sampled_from(
    ["[::1]", "[::FFFF:8.8.8.8]", "[2606:4700:4700::1111]", "[2606:4700:4700:0:0:0:0:1111]", "[fe80::1%25eth0]",
     "[::1", "[::\uff11]", "[]"])
long_name = st.integers(1, 5).map(lambda n: ".".join(["a" * 62] * n) + ".com")
host = st.one_of(ascii_name(), ascii_name(), name(), name(), digits_and_dots, ipv4, ipv6, long_name)

# -- the rest of the URL ------------------------------------------------------

scheme = st.sampled_from(["http://", "https://", "https://", "HTTP://", "Https://", "ftp://", "//", "", "https:/"])
userinfo = st.sampled_from(["", "", "", "", "user@", "u:p@", "@"])
port = st.one_of(st.just(""), st.just(""), st.integers(0, 70000).map(lambda p: f":{p}"),
                 st.sampled_from([":", ":0", ":080", ":00443", ":65535", ":65536", ":\uff18\uff10", ":+1", ":-1",
                                  ":1_0", ": 80"]))
path_char = st.one_of(
    st.sampled_from(list("abcXYZ019-._~!$&'()*+,;=:@/%?#\\ \"<>^`{|}") + ["%2F", "%00", "%zz", "%", "\t", "\x7f",
                     "%7E", "%7e", "%41", "%2f", "%C3%A9", "%c3%a9", "%%41", "%4", "\u200e", "\u202e", "\u0085",
                     "utm_source=x", "&utm_id", "gclid=1&", "?_ga=2", "&ref=3", "a=", ":443", ":80"]),
    st.characters(codec="utf-8", exclude_categories=("Cs",)),
)
rest = st.lists(path_char, max_size=30).map("".join)
padding = st.one_of(st.just(""), st.integers(MAX_URL_LENGTH - 40, MAX_URL_LENGTH + 5).map(lambda n: "p" * n))
space = st.sampled_from(["", "", "", " ", "\n", "\u3000", "\u00a0"])


@st.composite
def url(draw: st.DrawFn) -> str:
    text = draw(scheme) + draw(userinfo) + draw(host) + draw(port)
    tail = draw(rest)
    if tail and tail[0] not in "/?#" and draw(st.booleans()):
        tail = "/" + tail
    text += tail
    pad = draw(padding)
    if pad:  # bring the URL right up to the limit, in the path, query or fragment
        where = draw(st.sampled_from(["/", "?", "#", "/?"]))
        text += where + pad[: max(0, MAX_URL_LENGTH - len(text) + draw(st.integers(-3, 3)))]
    return draw(space) + text + draw(space)


common = st.builds(
    lambda sub, domain, p, path, query, frag: f"https://{sub}{domain}{p}/{path}{query}{frag}",
    st.sampled_from(["", "www.", "blog.", "WWW."]),
    st.sampled_from(["example.com", "example.org", "b\u00fccher.example", "xn--bcher-kva.example", "8.8.8.8"]),
    st.sampled_from(["", ":8443", ":443", ":0", ":080", ":65536", ":"]),
    st.from_regex(r"[a-z0-9/._%-]{0,30}", fullmatch=True),
    st.sampled_from(["", "?", "?page=2", "?a=1&b=%20", "??", "?utm_source=a&page=2", "?utm_source=a", "?%75tm_x=1",
                     "?gclid=&&a=1", "?ref=1&utm_medium=%7e"]),
    st.sampled_from(["", "#", "#top", "#\u00e9"]),
)

printable = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), max_size=25)
#: Close to what the fast path takes, with one of its edges hit now and then.
fastish = st.builds(
    lambda sch, h, p, path, q, frag: f"{sch}{h}{p}{path}{q}{frag}",
    st.sampled_from(["https://", "http://", "https://", "HTTP://"]),
    ascii_name(),
    st.sampled_from(["", "", "", ":8443", ":1", ":65535", ":65536", ":99999", ":080", ":0", ":"]),
    st.one_of(st.just(""), printable.map(lambda t: "/" + t)),
    st.one_of(st.just(""), st.just("?"), printable.map(lambda t: "?" + t)),
    st.one_of(st.just(""), st.just("#"), st.text(max_size=10).map(lambda t: "#" + t)),
)


@settings(max_examples=2500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(fastish, fastish, url(), url(), common, st.text(max_size=60)))
@example("https://www.example.com/a?b#c")
@example("https://example.com?" + "q" * (MAX_URL_LENGTH - len("https://example.com?")))
@example("https://example.com/" + "q" * (MAX_URL_LENGTH - len("https://example.com/")))
@example("https://a.localhost/")
@example("https://a.b.internal/")
@example("https://example.com:65536/")
@example("https://example.com:0/")
@example("https://example.com:080/")
@example("https://example.com/#" + "f" * MAX_INPUT_LENGTH)  # refused whole, before parsing
@example("https://example.com/p?")
@example("https://example.com/p?#x")
@example("https://example.com#x")
@example("https://example.com:8443#x")
@example("https://" + ".".join(["a" * 63] * 4) + "/")  # 255 characters: over the 253 of a name
@example("https://exa_mple.com/")
@example("https://xn--bcher-kva.example/")
@example("https://xn--abc.example.com/")
@example("https://example.123/")
@example("https://1.2.3.4/")
@example("https://example.com/\u00e9?\u00e9#\u00e9")
@example("https://example.com\\@evil.com/")
@example("https://example.com/#\u3000")
def test_fast_path_equals_the_full_check(value: str) -> None:
    assert_same(value)


#: Queries made of parameters the filters drop and keep, escaped or not.
param = st.sampled_from(["utm_source=x", "utm_=", "utm", "gclid", "gclid=1", "_ga=2", "_gac=3", "ref=1", "a=%7e",
                         "%75tm_medium=m", "b=%41", "", "c=1=2", "fbclid=%zz", "msclkid=\u00e9", "mc_cid=1"])
query_heavy = st.builds(
    lambda sch, h, p, path, params, frag: f"{sch}{h}{p}{path}?{'&'.join(params)}{frag}",
    st.sampled_from(["https://", "http://"]),
    st.sampled_from(["example.com", "www.example.org", "b\u00fccher.example", "8.8.8.8"]),
    st.sampled_from(["", ":443", ":80", ":8080"]),
    st.sampled_from(["", "/", "/a", "/%7Ea", "/caf\u00e9", "/utm_source=1"]),
    st.lists(param, max_size=6),
    st.sampled_from(["", "#utm_source=x"]),
)


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(query_heavy, query_heavy, fastish, url(), common), st.sampled_from([TRACKING, NAMES_ONLY]))
@example("https://example.com/?utm_source=x", TRACKING)
@example("https://example.com:443/a?%75tm_source=x&b=1", TRACKING)
@example("https://example.com/a?ref=1&&ref", NAMES_ONLY)
def test_fast_path_equals_the_full_check_with_a_parameter_filter(value: str, strip: QueryFilter) -> None:
    assert_same(value, strip)


def test_the_fast_path_takes_the_common_urls() -> None:
    """Otherwise the property above would prove nothing about it."""
    for value in ["https://www.example.com/articles/1?page=2", "http://example.org", "https://Example.COM:8443/a#b",
                  "https://r4---sn-x.example.com/x/y.html", "https://example.com/%7Euser/?q=%20",
                  "https://example.com:443/a", "https://example.com/a?utm_source=x&p=1"]:
        assert _fast_check(value) is not None, value
        assert _fast_check(value, TRACKING) is not None, value
    for value in ["https://b\u00fccher.example/", "https://xn--bcher-kva.example/", "https://8.8.8.8/",
                  "https://[2606:4700:4700::1111]/", "HTTPS://example.com/", "https://example.com./",
                  "https://example.com/p?", "https://a.localhost/", " https://example.com/"]:
        assert _fast_check(value) is None, value


@pytest.mark.parametrize("allowed", [None, frozenset(), frozenset({"example.com"})])
def test_allow_list_refusals_are_the_same_on_both_paths(allowed) -> None:
    for value in ["https://example.com/a", "https://other.example.org/b", "https://EXAMPLE.com/c"]:
        expected = outcome(_full_check, value)
        if expected[0] == "ok" and allowed is not None and expected[1][1] not in allowed:  # type: ignore[index]
            with pytest.raises(InvalidURLError):
                check_url(value, allowed)
        else:
            assert outcome(lambda u, f: check_url(u, allowed, f), value) == expected
