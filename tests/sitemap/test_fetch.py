"""Remote sitemaps, fetched from a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import gzip
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
import requests

from flask_indexnow.delivery.endpoint import new_http_session
from flask_indexnow.sitemap import SitemapError, SitemapReader, read_sitemap

from ..file_server import File, closed_port, silent_port
from .helpers import index, urlset

XML = {"Content-Type": "application/xml"}


def urls(source: str, **options: Any) -> list[str]:
    return [entry.url for entry in read_sitemap(source, **options)]


class PretendDNS(requests.adapters.HTTPAdapter):
    """Sends requests for a public-looking name to the local server: a stand-in for DNS only."""

    def __init__(self, names: dict[str, str]) -> None:
        super().__init__()
        self.names = names

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:  # type: ignore[override]
        parts = urlsplit(request.url or "")
        if parts.netloc in self.names:
            request.url = urlunsplit(parts._replace(netloc=self.names[parts.netloc]))
        return super().send(request, **kwargs)


def test_remote_urlset(files):
    files.files["/sitemap.xml"] = File(urlset("https://example.com/a", "https://example.com/b"))
    assert urls(files.url("/sitemap.xml"), allow_private=True) == ["https://example.com/a", "https://example.com/b"]
    assert files.requested == ["/sitemap.xml"]


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "[::1]", "2130706433"])
def test_loopback_is_refused_by_default(files, host):
    files.files["/sitemap.xml"] = File(urlset("https://example.com/a"))
    port = urlsplit(files.url("/")).port
    with pytest.raises(SitemapError, match="cannot fetch .*(public|local).*--allow-private-hosts"):
        urls(f"http://{host}:{port}/sitemap.xml")
    assert files.requested == []


def test_remote_index_with_gzip_children(files):
    files.files["/index.xml"] = File(index("/posts.xml.gz", files.url("/pages.xml"), "encoded.xml"))
    files.files["/posts.xml.gz"] = File(gzip.compress(urlset("https://example.com/p")), headers={"Content-Type": "application/gzip"})
    files.files["/pages.xml"] = File(urlset("https://example.com/about"))
    files.files["/encoded.xml"] = File(gzip.compress(urlset("https://example.com/enc")),
                                       headers={"Content-Type": "application/xml", "Content-Encoding": "gzip"})
    reader = SitemapReader(files.url("/index.xml"), allow_private=True)
    with reader:
        assert [e.url for e in reader] == ["https://example.com/p", "https://example.com/about", "https://example.com/enc"]
        assert [e.url for e in reader] == ["https://example.com/p", "https://example.com/about", "https://example.com/enc"]
    # the second pass read the local copies: each document was fetched once
    assert sorted(files.requested) == ["/encoded.xml", "/index.xml", "/pages.xml", "/posts.xml.gz"]
    assert reader.stats.sitemaps == 4


def test_redirects_are_followed_hop_by_hop(files):
    files.files["/old.xml"] = File(b"", 301, {"Location": "/new.xml"})
    files.files["/new.xml"] = File(urlset("https://example.com/moved"))
    assert urls(files.url("/old.xml"), allow_private=True) == ["https://example.com/moved"]
    assert files.requested == ["/old.xml", "/new.xml"]


def test_redirect_from_a_public_host_to_a_private_one_is_refused(files):
    http = new_http_session()
    http.mount("http://", PretendDNS({"sitemaps.example.com": files.netloc}))
    files.files["/ok.xml"] = File(b"", 302, {"Location": "http://sitemaps.example.com/real.xml"})
    files.files["/real.xml"] = File(urlset("https://example.com/real"))
    files.files["/sitemap.xml"] = File(b"", 302, {"Location": files.url("/internal.xml")})
    files.files["/internal.xml"] = File(urlset("https://example.com/internal"))
    assert urls("http://sitemaps.example.com/ok.xml", http=http) == ["https://example.com/real"]
    with pytest.raises(SitemapError, match=r"cannot fetch http://127\.0\.0\.1:\d+/internal\.xml: host 127\.0\.0\.1 is not a public"):
        urls("http://sitemaps.example.com/sitemap.xml", http=http)
    assert "/internal.xml" not in files.requested
    http.close()


def test_redirect_to_another_scheme_is_refused_even_for_a_sandbox(files):
    files.files["/sitemap.xml"] = File(b"", 302, {"Location": "file:///etc/passwd"})
    with pytest.raises(SitemapError, match="only http and https"):
        urls(files.url("/sitemap.xml"), allow_private=True)


def test_redirect_loop(files):
    files.files["/a.xml"] = File(b"", 302, {"Location": "/b.xml"})
    files.files["/b.xml"] = File(b"", 302, {"Location": "/a.xml"})
    with pytest.raises(SitemapError, match="more than 5 redirects"):
        urls(files.url("/a.xml"), allow_private=True)
    assert len(files.requested) == 6


def test_http_error(files):
    with pytest.raises(SitemapError, match=r"cannot fetch http://.*/missing\.xml: HTTP 404"):
        urls(files.url("/missing.xml"), allow_private=True)


def test_size_is_capped_while_streaming(files):
    files.files["/big.xml"] = File(urlset(*(f"https://example.com/{n}" for n in range(200))))
    with pytest.raises(SitemapError, match="larger than"):
        urls(files.url("/big.xml"), allow_private=True, max_bytes=2000)


def test_unsupported_content_encoding(files):
    files.files["/br.xml"] = File(b"\x00\x01", headers={"Content-Encoding": "br"})
    with pytest.raises(SitemapError, match="unsupported Content-Encoding 'br'"):
        urls(files.url("/br.xml"), allow_private=True)


def test_timeout():
    with silent_port() as port:
        with pytest.raises(SitemapError, match="no (answer|data) within 0.3s"):
            urls(f"http://127.0.0.1:{port}/sitemap.xml", allow_private=True, timeout=0.3)


def test_connection_refused():
    with pytest.raises(SitemapError, match="cannot fetch .*ConnectionError"):
        urls(f"http://127.0.0.1:{closed_port()}/sitemap.xml", allow_private=True)


def test_private_child_of_a_public_index_is_refused(files):
    http = new_http_session()
    http.mount("http://", PretendDNS({"sitemaps.example.com": files.netloc}))
    files.files["/index.xml"] = File(index("http://10.0.0.5/private.xml"))
    with pytest.raises(SitemapError, match="host 10.0.0.5 is not a public address"):
        urls("http://sitemaps.example.com/index.xml", http=http)
    assert files.requested == ["/index.xml"]
    http.close()
