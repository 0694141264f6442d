"""Issue 10.3: what passes validation fits the database (URL 2,048, host 255, on the stored form)."""

from __future__ import annotations

import pytest
from flask import Flask

from flask_indexnow import IndexNow, InvalidURLError
from flask_indexnow.sitemap import submit_sitemap
from flask_indexnow.state import get_state
from flask_indexnow.urls import MAX_HOST_LENGTH, MAX_URL_LENGTH, check_url

from ..conftest import rows
from ..sitemap.helpers import urlset

pytestmark = pytest.mark.every_backend  # column sizes and index limits differ by database

#: 2,048 characters as written, 2,049 once normalised (the path "/" is added).
NO_PATH_2049 = "https://example.com?" + "q" * (MAX_URL_LENGTH - len("https://example.com?"))
#: Exactly 2,048 characters as stored.
STORED_2048 = "https://example.com/?" + "q" * (MAX_URL_LENGTH - len("https://example.com/?"))
#: A name of 247 ASCII characters written with a soft hyphen after every letter:
#: far over 255 characters as text, but stored in its mapped (ASCII) form.
SOFT_HOST = ".".join(["\u00ad".join("abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxy")] * 4)
SOFT_URL = f"https://{SOFT_HOST}/page"
SOFT_ASCII_HOST = SOFT_HOST.replace("\u00ad", "")


def ext(app: Flask) -> IndexNow:
    return app.extensions["indexnow"].extension  # type: ignore[no-any-return]


def test_the_examples_are_what_they_claim() -> None:
    assert len(NO_PATH_2049) == MAX_URL_LENGTH
    assert len(STORED_2048) == MAX_URL_LENGTH
    assert len(SOFT_HOST) > MAX_HOST_LENGTH >= len(SOFT_ASCII_HOST)


def test_the_limit_applies_to_the_normalised_url() -> None:
    with pytest.raises(InvalidURLError, match=f"longer than {MAX_URL_LENGTH} characters"):
        check_url(NO_PATH_2049)
    assert check_url(STORED_2048).url == STORED_2048


def test_a_dropped_fragment_does_not_count() -> None:
    url = "https://example.com/page#" + "f" * MAX_URL_LENGTH
    assert check_url(url).url == "https://example.com/page"


def test_the_host_is_stored_and_measured_in_ascii() -> None:
    checked = check_url(SOFT_URL)
    assert checked.host == SOFT_ASCII_HOST and len(checked.host) <= MAX_HOST_LENGTH
    assert checked.url == f"https://{SOFT_ASCII_HOST}/page"


def test_unicode_path_counts_in_its_stored_percent_encoded_form() -> None:
    """SPEC §13: non-ASCII is stored percent-encoded ("é" is "%C3%A9"), so the limit applies to that form."""
    room = MAX_URL_LENGTH - len("https://example.com/")
    url = "https://example.com/" + "\u00e9" * (room // 6) + "a" * (room % 6)
    assert check_url(url).url == "https://example.com/" + "%C3%A9" * (room // 6) + "a" * (room % 6)
    assert len(check_url(url).url) == MAX_URL_LENGTH
    with pytest.raises(InvalidURLError, match="longer than"):
        check_url(url + "\u00e9")


def test_every_url_and_host_column_has_the_checked_size(app: Flask) -> None:
    models = app.extensions["indexnow"].models
    for model in (models.Queue, models.History, models.URLState):
        columns = model.__table__.c
        assert columns.url.type.length == MAX_URL_LENGTH, model
        assert columns.host.type.length == MAX_HOST_LENGTH, model


def test_enqueue_many_reports_oversize_urls_and_queues_the_good_ones(make_app) -> None:
    """On PostgreSQL and MariaDB the 2,049-character URL used to fail the whole call."""
    app = make_app()
    urls = ["https://example.com/good-1", NO_PATH_2049, SOFT_URL, STORED_2048, "https://example.com/good-2"]
    with app.app_context():
        result = ext(app).enqueue_many(urls)
        with pytest.raises(InvalidURLError, match="longer than"):
            ext(app).enqueue(NO_PATH_2049)
    assert result.queued == 4
    assert result.rejected == [(NO_PATH_2049, f"URL is longer than {MAX_URL_LENGTH} characters")]
    stored = {(r.host, r.url) for r in rows(app)}
    assert stored == {
        ("example.com", "https://example.com/good-1"),
        ("example.com", "https://example.com/good-2"),
        ("example.com", STORED_2048),
        (SOFT_ASCII_HOST, f"https://{SOFT_ASCII_HOST}/page"),
    }


def test_submit_sitemap_reports_oversize_urls_per_url(make_app, tmp_path) -> None:
    good = [f"https://example.com/{n}" for n in range(12)]
    oversize = [NO_PATH_2049.replace("qqq", f"{n:03d}", 1) for n in range(3)]
    path = tmp_path / "sitemap.xml"
    path.write_bytes(urlset(*good[:4], oversize[0], *good[4:8], oversize[1], SOFT_URL, *good[8:], oversize[2]))
    app = make_app()
    with app.app_context():
        result = submit_sitemap(get_state(), path, chunk_size=5)  # the oversize ones fall in several chunks
    assert (result.found, result.queued, result.rejected_count) == (16, 13, 3)
    assert [url for url, _ in result.rejected] == oversize
    assert {why for _, why in result.rejected} == {f"URL is longer than {MAX_URL_LENGTH} characters"}
    assert sorted(r.url for r in rows(app)) == sorted([*good, f"https://{SOFT_ASCII_HOST}/page"])


@pytest.mark.parametrize("backend", ["sqlite"])
def test_submit_sitemap_command_prints_each_rejected_url(make_app, tmp_path) -> None:
    path = tmp_path / "sitemap.xml"
    path.write_bytes(urlset("https://example.com/a", NO_PATH_2049))
    app = make_app()
    result = app.test_cli_runner().invoke(args=["indexnow", "submit-sitemap", str(path)])
    assert result.exit_code == 0, result.output
    assert "Queued 1, unchanged 0, rejected 1" in result.output
    assert f"rejected {NO_PATH_2049[:200]}: URL is longer than {MAX_URL_LENGTH} characters" in result.output
    assert [r.url for r in rows(app)] == ["https://example.com/a"]
