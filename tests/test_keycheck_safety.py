"""``key check`` fetches only public addresses, connects to the one it checked, and prints safely."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from flask_indexnow.keys.keycheck import check_key_files
from flask_indexnow.state import get_state

from .conftest import KEY
from .file_server import File, FileServer
from .pretend_network import PRIVATE_ANSWERS, PUBLIC, Network, network_fixture  # noqa: F401 (the fixture)
from .raw_server import RawServer, reply

TEXT = {"Content-Type": "text/plain; charset=utf-8"}
#: What a hostile server puts in a header or body: a terminal-title OSC sequence, CR/LF and a
#: forged "[ok ]" line (in a header: a folded continuation line, which HTTP parsers keep in the
#: value), a bidi override, and C1 controls (the CSI "clear screen").
HOSTILE = "\x1b]0;pwned\x07\r\n [ok ] example.com: serves the key\u202egnp.\x9b2J"


@pytest.fixture
def files() -> Iterator[FileServer]:
    server = FileServer().start()
    yield server
    server.stop()


def public_app(make_app):
    """An app that checks only public hosts (the tests' default app allows private ones)."""
    return make_app(INDEXNOW_KEY_LOCATION="http://{host}/{key}.txt", INDEXNOW_ALLOW_PRIVATE_ENDPOINT=False)


def check(app, *hosts, **options):
    with app.app_context():
        return check_key_files(get_state(), list(hosts), **options)


@pytest.mark.parametrize("addresses", PRIVATE_ANSWERS.values(), ids=PRIVATE_ANSWERS.keys())
def test_a_name_resolving_to_a_private_address_is_not_fetched(make_app, files, network: Network, addresses):
    network.answer("evil.example", addresses)
    files.files[f"/{KEY}.txt"] = File(b"secret metadata token", headers=TEXT)
    [result] = check(public_app(make_app), f"evil.example:{files.port}")
    assert [p.code for p in result.problems] == ["refused"]
    assert "not a public address" in result.problems[0].message
    assert "secret" not in result.problems[0].message
    assert files.requested == [] and network.connected == []


def test_a_public_address_is_checked_by_the_address_resolved_once(make_app, files, network: Network):
    network.answer("www.example", [PUBLIC], ["127.0.0.1"])  # rebinds after the first look-up
    files.files[f"/{KEY}.txt"] = File(KEY.encode(), headers=TEXT)
    [result] = check(public_app(make_app), f"www.example:{files.port}")
    assert result.ok, result.problems
    assert (network.lookups, network.connected) == (["www.example"], [PUBLIC])


def test_allow_private_hosts_flag_lets_a_sandbox_through(make_app, files):
    files.files[f"/{KEY}.txt"] = File(KEY.encode(), headers=TEXT)
    app = public_app(make_app)
    refused = app.test_cli_runner().invoke(args=["indexnow", "key", "check", "--host", files.netloc])
    assert refused.exit_code == 1 and "--allow-private-hosts" in refused.output
    assert files.requested == []
    allowed = app.test_cli_runner().invoke(
        args=["indexnow", "key", "check", "--host", files.netloc, "--allow-private-hosts"])
    assert allowed.exit_code == 0, allowed.output
    assert "serves the key" in allowed.output


def assert_printable(text: str) -> None:
    bad = [c for c in text if c != "\n" and (ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F or c in "\u202e\u2028")]
    assert bad == [], repr(text)


def test_a_redirect_location_is_printed_safely(make_app):
    with RawServer() as raw:
        raw.answer.data = reply("301 Moved", {"Location": "http://x.example/" + HOSTILE})
        result = make_app(INDEXNOW_KEY_LOCATION="http://{host}/{key}.txt").test_cli_runner().invoke(
            args=["indexnow", "key", "check", "--host", raw.netloc])
    assert result.exit_code == 1
    assert "redirect to http://x.example/" in result.output
    assert_printable(result.output)
    assert result.output.count("[ok ]") == 1  # the forged text stays inside the [ERR] line
    assert all(line.startswith(("[ERR]", "      Fix:", "Error:")) for line in result.output.splitlines())


def test_a_key_file_body_is_printed_safely(make_app):
    with RawServer() as raw:
        raw.answer.data = reply("200 OK", {"Content-Type": "text/plain"}, HOSTILE.encode())
        result = make_app(INDEXNOW_KEY_LOCATION="http://{host}/{key}.txt").test_cli_runner().invoke(
            args=["indexnow", "key", "check", "--host", raw.netloc])
    assert result.exit_code == 1
    assert "wrong content" in result.output
    assert_printable(result.output)
