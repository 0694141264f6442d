"""Remote text printed on a terminal or a page is made safe (one helper: ``safe_text``)."""

from __future__ import annotations

import pytest

from flask_indexnow.delivery.endpoint import new_http_session, post_batch
from flask_indexnow.safetext import safe_text
from flask_indexnow.state import get_state

from .conftest import KEY
from .endpoint_server import Reply
from .sitemap.helpers import urlset

OSC = "\x1b]0;pwned\x07"


def printable(text: str) -> bool:
    return not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F or c in "\u202e\u200b\u2028\u2029\ufeff" for c in text)


@pytest.mark.parametrize(("raw", "shown"), [
    (f"a{OSC}b", "a ]0;pwned b"),
    ("line\r\n[ok ] forged", "line [ok ] forged"),
    ("abc\u202etxt.exe", "abctxt.exe"),
    ("zero\u200bwidth\ufeff", "zerowidth"),
    ("c1\x9b2J\x85next\u2028sep", "c1 2J next sep"),
    ("plain Bücher text", "plain Bücher text"),
])
def test_safe_text(raw, shown):
    assert safe_text(raw) == shown


def test_an_endpoint_error_body_is_stored_safely(make_app, endpoint):
    endpoint.default = Reply(400, {"Content-Type": "text/plain"}, f"bad{OSC}\r\n[ok ] fine\u202e".encode())
    app = make_app()
    with new_http_session() as http:
        answer = post_batch(http, get_state(app).settings, "example.com", KEY, ["https://example.com/a"])
    assert answer.error == "HTTP 400: bad ]0;pwned [ok ] fine"


def test_an_endpoint_redirect_location_is_stored_safely(make_app, endpoint):
    endpoint.default = Reply(302, {"Location": f"https://x.example/{OSC}\r\n [ok ] forged"})
    app = make_app()
    with new_http_session() as http:
        answer = post_batch(http, get_state(app).settings, "example.com", KEY, ["https://example.com/a"])
    assert answer.error is not None and printable(answer.error)
    assert answer.error.startswith("HTTP 302 redirect to https://x.example/ ]0;pwned [ok ] forged")


def test_rejected_sitemap_urls_are_printed_safely(make_app, tmp_path):
    sitemap = tmp_path / "sitemap.xml"
    sitemap.write_bytes(urlset("https://example.com/ok", "javascript:\u202e\x85alert(1)//\u2028[ok ] queued"))
    result = make_app().test_cli_runner().invoke(args=["indexnow", "submit-sitemap", str(sitemap)])
    assert "rejected javascript:" in result.output
    assert printable(result.output.replace("\n", "")), repr(result.output)
