"""Outbound fetches check the addresses a name resolves to, and connect to the one checked.

A name that looks public may resolve to 127.0.0.1 or 169.254.169.254 (cloud
metadata). The tests give names their addresses through ``outbound.resolve``
(no real DNS), and route one public-looking address to the local server at the
socket (see ``tests/pretend_network.py``).
"""

from __future__ import annotations

from typing import Any

import pytest

from flask_indexnow.sitemap import SitemapError, read_sitemap

from ..file_server import File, FileServer
from ..pretend_network import PRIVATE_ANSWERS, PUBLIC, Network, network_fixture  # noqa: F401 (the fixture)
from .helpers import index, urlset


def urls(source: str, **options: Any) -> list[str]:
    return [entry.url for entry in read_sitemap(source, **options)]


@pytest.mark.parametrize("addresses", PRIVATE_ANSWERS.values(), ids=PRIVATE_ANSWERS.keys())
def test_a_public_name_resolving_to_a_private_address_is_refused(files: FileServer, network: Network, addresses):
    network.answer("evil.example", addresses)
    files.files["/sitemap.xml"] = File(urlset("https://example.com/a"))
    with pytest.raises(SitemapError, match=r"evil\.example resolves to .* not a public address.*--allow-private-hosts"):
        urls(f"http://evil.example:{files.port}/sitemap.xml")
    assert files.requested == []
    assert network.connected == []


def test_a_public_address_is_fetched(files: FileServer, network: Network):
    network.answer("sitemaps.example", [PUBLIC])
    files.files["/sitemap.xml"] = File(urlset("https://example.com/a"))
    assert urls(f"http://sitemaps.example:{files.port}/sitemap.xml") == ["https://example.com/a"]
    assert network.connected == [PUBLIC]


def test_a_rebinding_name_is_connected_by_the_address_checked(files: FileServer, network: Network):
    # The first look-up says public, every later one says loopback: only one look-up may happen.
    network.answer("rebind.example", [PUBLIC], ["127.0.0.1"])
    files.files["/sitemap.xml"] = File(urlset("https://example.com/a"))
    assert urls(f"http://rebind.example:{files.port}/sitemap.xml") == ["https://example.com/a"]
    assert network.lookups == ["rebind.example"]
    assert network.connected == [PUBLIC]


def test_a_redirect_hop_to_a_private_address_is_refused(files: FileServer, network: Network):
    network.answer("sitemaps.example", [PUBLIC])
    network.answer("evil.example", ["169.254.169.254"])
    files.files["/old.xml"] = File(b"", 301, {"Location": f"http://evil.example:{files.port}/latest/meta-data"})
    with pytest.raises(SitemapError, match=r"evil\.example resolves to 169\.254\.169\.254"):
        urls(f"http://sitemaps.example:{files.port}/old.xml")
    assert files.requested == ["/old.xml"]
    assert network.connected == [PUBLIC]


def test_an_index_child_on_a_private_address_is_refused(files: FileServer, network: Network):
    network.answer("sitemaps.example", [PUBLIC])
    network.answer("evil.example", ["127.0.0.1"])
    files.files["/index.xml"] = File(index(f"http://evil.example:{files.port}/private.xml"))
    files.files["/private.xml"] = File(urlset("https://example.com/secret"))
    with pytest.raises(SitemapError, match=r"evil\.example resolves to 127\.0\.0\.1"):
        urls(f"http://sitemaps.example:{files.port}/index.xml")
    assert files.requested == ["/index.xml"]


def test_allow_private_lets_a_local_sandbox_through_by_its_one_address(files: FileServer, network: Network):
    network.answer("sandbox.test", ["127.0.0.1"], [PUBLIC])
    files.files["/sitemap.xml"] = File(urlset("https://example.com/a"))
    assert urls(f"http://sandbox.test:{files.port}/sitemap.xml", allow_private=True) == ["https://example.com/a"]
    assert (network.lookups, network.connected) == (["sandbox.test"], ["127.0.0.1"])


def test_the_cli_refuses_and_names_the_opt_out(make_app, files: FileServer, network: Network):
    network.answer("evil.example", ["127.0.0.1"])
    files.files["/sitemap.xml"] = File(urlset("https://example.com/a"))
    app = make_app()
    result = app.test_cli_runner().invoke(args=["indexnow", "submit-sitemap", f"http://evil.example:{files.port}/sitemap.xml"])
    assert result.exit_code == 1
    assert "resolves to 127.0.0.1" in result.output and "--allow-private-hosts" in result.output
    assert files.requested == []
