"""The sitemap route over HTTP: gzip, ETag/Last-Modified and 304, and one build shared through the cache."""

from __future__ import annotations

import gzip
import logging
import threading
import time
from datetime import timedelta
from typing import Any

import pytest
from flask_caching import Cache

from flask_indexnow.sitemap import cache as sitemap_cache

from .site import body_of, make_site, parse_index, parse_urlset

pytestmark = pytest.mark.parametrize("backend", ["sqlite", "postgresql"])

A = "https://a.example.org"


def _builds(caplog: Any) -> int:
    return sum("sitemap built" in r.getMessage() for r in caplog.records)


@pytest.fixture
def site(make_app: Any, clock: Any) -> Any:
    site = make_site(make_app, INDEXNOW_QUEUE_ENABLED=False, INDEXNOW_DRY_RUN=True)
    with site.app.app_context():
        yield site
        site.close()


def test_gzip_when_the_client_accepts_it(site: Any) -> None:
    site.add("one")
    zipped = site.get(**{"Accept-Encoding": "gzip, deflate"})
    plain = site.get(**{"Accept-Encoding": "identity"})

    assert zipped.headers["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in zipped.headers["Vary"] and "Accept-Encoding" in plain.headers["Vary"]
    assert "Content-Encoding" not in plain.headers
    assert gzip.decompress(zipped.get_data()) == plain.get_data()
    assert set(parse_urlset(plain.get_data())) == {f"{A}/p/one"}
    assert plain.headers["Content-Type"] == "application/xml; charset=utf-8"
    assert zipped.headers["ETag"] != plain.headers["ETag"]  # two representations, two tags


def test_etag_and_last_modified_give_304(site: Any, clock: Any) -> None:
    site.add("one")
    first = site.get()
    etag, modified = first.headers["ETag"], first.headers["Last-Modified"]
    assert first.status_code == 200

    again = site.get(**{"If-None-Match": etag})
    assert again.status_code == 304 and again.get_data() == b""
    assert site.get(**{"If-Modified-Since": modified}).status_code == 304
    assert site.get(**{"If-None-Match": '"something-else"'}).status_code == 200
    earlier = (clock.now - timedelta(hours=1)).strftime("%a, %d %b %Y %H:%M:%S GMT")
    assert site.get(**{"If-Modified-Since": earlier}).status_code == 200


def test_a_rebuild_with_nothing_changed_keeps_the_etag_and_a_change_moves_it(make_app: Any, clock: Any) -> None:
    site = make_site(make_app, INDEXNOW_QUEUE_ENABLED=False, INDEXNOW_SITEMAP_CACHE_SECONDS=0)
    with site.app.app_context():
        try:
            page = site.add("one")
            etag = site.get().headers["ETag"]
            assert site.get().headers["ETag"] == etag  # built again, same bytes
            clock.advance(60)
            page.title = "Changed"
            site.db.session.commit()
            changed = site.get(**{"If-None-Match": etag})
            assert changed.status_code == 200 and changed.headers["ETag"] != etag
        finally:
            site.close()


def test_a_crawler_storm_costs_one_build(site: Any, caplog: Any) -> None:
    site.add("one")
    caplog.set_level(logging.INFO, logger="flask_indexnow")
    bodies = {body_of(site.get(**{"Accept-Encoding": enc})) for enc in ("gzip", "", "gzip", "identity") * 3}
    assert len(bodies) == 1
    assert _builds(caplog) == 1
    site.add("two")  # within INDEXNOW_SITEMAP_CACHE_SECONDS the cached build is served
    assert set(parse_urlset(site.get().get_data())) == {f"{A}/p/one"}
    assert _builds(caplog) == 1


def test_a_stale_build_is_served_at_once_and_rebuilt_after_the_response(site: Any, clock: Any,
                                                                      caplog: Any) -> None:
    site.add("one")
    caplog.set_level(logging.INFO, logger="flask_indexnow")
    site.get().close()
    site.add("two")
    clock.advance(301)  # past INDEXNOW_SITEMAP_CACHE_SECONDS

    stale = site.get()
    assert set(parse_urlset(stale.get_data())) == {f"{A}/p/one"}  # answered without waiting for a build
    assert _builds(caplog) == 1
    stale.close()  # the server is done with the response: the rebuild runs now
    assert _builds(caplog) == 2
    fresh = site.get()
    assert set(parse_urlset(fresh.get_data())) == {f"{A}/p/one", f"{A}/p/two"}
    fresh.close()
    assert _builds(caplog) == 2  # fresh again: no more builds


def test_the_parts_of_an_index_come_from_the_same_cached_build(make_app: Any, caplog: Any) -> None:
    site = make_site(make_app, INDEXNOW_QUEUE_ENABLED=False, INDEXNOW_SITEMAP_MAX_URLS=2)
    with site.app.app_context():
        try:
            for i in range(5):
                site.add(f"p{i}")
            caplog.set_level(logging.INFO, logger="flask_indexnow")
            parts = parse_index(site.get().get_data())
            for part in parts:
                assert site.get(part[len(A):]).status_code == 200
            assert len(parts) == 3 and _builds(caplog) == 1
        finally:
            site.close()


def test_two_processes_share_one_build_through_redis(make_app: Any, redis_url: str, caplog: Any) -> None:
    """Two apps on one database and one Redis stand for two processes of one site."""
    prefix = f"sitemap-shared-{id(caplog)}:"
    first = make_site(make_app, INDEXNOW_QUEUE_ENABLED=False, INDEXNOW_CACHE_TYPE="RedisCache",
                      INDEXNOW_CACHE_REDIS_URL=redis_url, INDEXNOW_CACHE_KEY_PREFIX=prefix)
    second = make_app(db=first.db, indexnow=first.indexnow, create_tables=False, INDEXNOW_SITEMAP_URL="/sitemap.xml",
                      INDEXNOW_QUEUE_ENABLED=False, INDEXNOW_ALLOWED_HOSTS=["a.example.org"],
                      INDEXNOW_CACHE_TYPE="RedisCache", INDEXNOW_CACHE_REDIS_URL=redis_url,
                      INDEXNOW_CACHE_KEY_PREFIX=prefix)
    with first.app.app_context():
        try:
            first.add("one")
            caplog.set_level(logging.INFO, logger="flask_indexnow")
            served = first.get().get_data()
            other = second.test_client().get("/sitemap.xml", base_url=A)
            assert other.get_data() == served
            assert _builds(caplog) == 1
        finally:
            first.state.guarded_cache.cache.clear()
            first.close()


@pytest.fixture
def building_elsewhere(make_app: Any, redis_url: str, caplog: Any) -> Any:
    """A site on a shared Redis cache with one page, whose build lock "another process" holds."""
    site = make_site(make_app, INDEXNOW_QUEUE_ENABLED=False, INDEXNOW_CACHE_TYPE="RedisCache",
                     INDEXNOW_CACHE_REDIS_URL=redis_url, INDEXNOW_CACHE_KEY_PREFIX=f"sitemap-wait-{id(caplog)}:")
    with site.app.app_context():
        try:
            site.add("one")
            assert site.state.guarded_cache.add(site.state.cache_key("sitemap:building"), 1, timeout=60)
            caplog.set_level(logging.INFO, logger="flask_indexnow")
            yield site
        finally:
            site.state.guarded_cache.cache.clear()
            site.close()


def _other_build_finishes(site: Any) -> None:
    """What the other process does at the end: store its build, free the lock."""
    with site.app.app_context():
        sitemap_cache._build(site.state, "a.example.org", 1, store=True)
        site.state.guarded_cache.delete(site.state.cache_key("sitemap:building"))


def test_a_process_waits_for_the_build_another_one_is_making(building_elsewhere: Any, caplog: Any) -> None:
    site = building_elsewhere

    def other_process() -> None:
        time.sleep(0.6)
        _other_build_finishes(site)

    builder = threading.Thread(target=other_process)
    builder.start()
    try:
        served = site.get()
    finally:
        builder.join()
    assert set(parse_urlset(served.get_data())) == {f"{A}/p/one"}
    assert _builds(caplog) == 1  # the other one's: this request waited for it


def test_a_build_that_finishes_between_two_polls_is_served_not_made_again(
        building_elsewhere: Any, caplog: Any, monkeypatch: Any) -> None:
    """The other process stores its build and frees the lock just after this one looked for the build."""
    site = building_elsewhere
    real_from_cache = sitemap_cache._from_cache
    looks: list[bool] = []

    def from_cache_then_other_finishes(*args: Any) -> Any:
        found = real_from_cache(*args)
        looks.append(found is None)
        if len(looks) == 3:  # the waiter's first poll: none yet, and now the other one finishes
            _other_build_finishes(site)
        return found

    monkeypatch.setattr(sitemap_cache, "_from_cache", from_cache_then_other_finishes)
    monkeypatch.setattr(sitemap_cache, "_POLL", 0.01)
    served = site.get()
    assert looks[:3] == [True, True, True]
    assert set(parse_urlset(served.get_data())) == {f"{A}/p/one"}
    assert _builds(caplog) == 1  # the other one's, found after its lock was gone


def test_a_cache_that_is_down_still_serves(make_app: Any) -> None:
    cache = Cache(config={"CACHE_TYPE": "RedisCache", "CACHE_REDIS_URL": "redis://127.0.0.1:9/0"})
    site = make_site(make_app, cache=cache, INDEXNOW_QUEUE_ENABLED=False)
    with site.app.app_context():
        try:
            site.add("one")
            assert set(parse_urlset(site.get().get_data())) == {f"{A}/p/one"}
        finally:
            site.close()
