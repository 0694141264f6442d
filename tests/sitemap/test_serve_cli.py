"""``flask indexnow sitemap`` writes what the route serves; the status page links the sitemap with its count."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import pytest

from .site import make_site, parse_index, parse_urlset

A = "https://a.example.org"


@pytest.fixture
def site(make_app: Any) -> Any:
    site = make_site(make_app, INDEXNOW_QUEUE_ENABLED=False, INDEXNOW_SITEMAP_CACHE_SECONDS=0)
    with site.app.app_context():
        yield site
        site.close()


def test_one_file_the_same_as_served(site: Any, tmp_path: Path) -> None:
    site.add("one")
    site.add("two", host="b.example.org")
    out = tmp_path / "sitemap.xml"

    result = site.app.test_cli_runner().invoke(args=["indexnow", "sitemap", "--host", "a.example.org",
                                                    "--output", str(out)])

    assert result.exit_code == 0, result.output
    assert "1 URL(s)" in result.output
    assert out.read_bytes() == site.get(**{"Accept-Encoding": "identity"}).get_data()
    assert set(parse_urlset(out.read_bytes())) == {f"{A}/p/one"}


def test_an_index_and_its_parts_beside_it(make_app: Any, tmp_path: Path) -> None:
    site = make_site(make_app, INDEXNOW_QUEUE_ENABLED=False, INDEXNOW_SITEMAP_MAX_URLS=2,
                     INDEXNOW_SITEMAP_CACHE_SECONDS=0)
    with site.app.app_context():
        try:
            for i in range(5):
                site.add(f"p{i}")
            out = tmp_path / "sitemap.xml.gz"
            result = site.app.test_cli_runner().invoke(
                args=["indexnow", "sitemap", "--host", "a.example.org", "--output", str(out)])
            assert result.exit_code == 0, result.output
            index = gzip.decompress(out.read_bytes())
            assert index == site.get(**{"Accept-Encoding": "identity"}).get_data()
            listed: list[str] = []
            for n, loc in enumerate(parse_index(index), start=1):
                assert loc == f"{A}/sitemap-{n}.xml"
                data = gzip.decompress((tmp_path / f"sitemap-{n}.xml.gz").read_bytes())
                assert data == site.get(f"/sitemap-{n}.xml", **{"Accept-Encoding": "identity"}).get_data()
                listed += parse_urlset(data)
            assert sorted(listed) == [f"{A}/p/p{i}" for i in range(5)]
        finally:
            site.close()


def test_mistakes_are_one_line(site: Any, tmp_path: Path) -> None:
    runner = site.app.test_cli_runner()
    no_host = runner.invoke(args=["indexnow", "sitemap", "--output", str(tmp_path / "s.xml")])
    assert no_host.exit_code == 1 and "--host" in no_host.output and "Traceback" not in no_host.output
    bad_name = runner.invoke(args=["indexnow", "sitemap", "--host", "a.example.org", "--output",
                                   str(tmp_path / "s.txt")])
    assert bad_name.exit_code == 1 and ".xml" in bad_name.output
    missing = runner.invoke(args=["indexnow", "sitemap", "--host", "a.example.org", "--output",
                                  str(tmp_path / "nope" / "s.xml")])
    assert missing.exit_code == 1 and "does not exist" in missing.output
    assert [p.name for p in tmp_path.iterdir()] == ["site.db"]  # nothing written


def test_the_status_page_links_the_sitemap_with_its_count(make_app: Any) -> None:
    site = make_site(make_app, INDEXNOW_QUEUE_ENABLED=False)
    site.indexnow.status_auth(lambda: True)
    with site.app.app_context():
        try:
            site.add("one")
            site.add("two")
            site.add("three", host="b.example.org")
            client = site.app.test_client()
            before = client.get("/indexnow/").get_data(as_text=True)
            assert 'id="sitemap"' in before and "Not built recently" in before
            site.get()  # the first crawler builds it
            after = client.get("/indexnow/").get_data(as_text=True)
            panel = after[after.index('id="sitemap"'):after.index('id="hosts"')]
            assert f'href="{A}/sitemap.xml"' in panel and "<td>2</td>" in panel
            assert 'href="https://b.example.org/sitemap.xml"' in panel and "<td>1</td>" in panel
        finally:
            site.close()


def test_no_panel_without_a_sitemap(make_app: Any) -> None:
    site = make_site(make_app, INDEXNOW_SITEMAP_URL=None, INDEXNOW_QUEUE_ENABLED=False)
    site.indexnow.status_auth(lambda: True)
    with site.app.app_context():
        try:
            assert 'id="sitemap"' not in site.app.test_client().get("/indexnow/").get_data(as_text=True)
        finally:
            site.close()
