"""``flask indexnow submit-sitemap``: summary, progress and one-line errors."""

from __future__ import annotations

import gzip

import pytest

from ..conftest import RUN_PREFIX, rows
from ..file_server import File
from .helpers import BILLION_LAUGHS, DTD_ONLY, urlset


def invoke(app, *args):
    return app.test_cli_runner().invoke(args=["indexnow", "submit-sitemap", *args])


def stderr_of(result):
    """stderr alone; click before 8.2 (the floor is 8.1.3) mixes it into the output by default."""
    try:
        return result.stderr
    except ValueError:
        return result.output


def assert_one_line_error(result, message):
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith("Error: ") and message in lines[0], lines[0]
    assert "Traceback" not in result.output


def test_submit_sitemap_command(make_app, tmp_path):
    path = tmp_path / "sitemap.xml.gz"
    path.write_bytes(gzip.compress(urlset(
        ("https://example.com/new", "2024-06-02"), ("https://example.com/old", "2024-01-01"),
        "https://example.com/undated", "javascript:alert(1)",
    )))
    app = make_app()
    result = invoke(app, str(path), "--since", "2024-06-01")
    assert result.exit_code == 0, result.output
    assert "Read 1 sitemap(s): 4 URL(s), 1 older than --since left out, 2 without a readable lastmod kept" in result.stdout
    assert "Queued 2, unchanged 0, rejected 1" in result.stdout
    assert "  rejected javascript:alert(1): only http and https URLs can be submitted" in result.stdout
    assert "Queueing" in stderr_of(result)  # the progress bar
    assert sorted(row.url for row in rows(app)) == ["https://example.com/new", "https://example.com/undated"]


def test_many_rejections_are_summarised(make_app, tmp_path):
    path = tmp_path / "sitemap.xml"
    path.write_bytes(urlset(*(f"http://127.0.0.{n}/" for n in range(1, 9))))
    result = invoke(make_app(), str(path))
    assert result.exit_code == 0, result.output
    assert result.stdout.count("  rejected http://127.0.0.") == 5
    assert "  … and 3 more rejected" in result.stdout


def test_remote_sitemap_needs_the_flag_for_a_local_server(make_app, files):
    files.files["/sitemap.xml"] = File(urlset("https://example.com/remote"))
    app = make_app()
    result = invoke(app, files.url("/sitemap.xml"))
    assert_one_line_error(result, "is not a public address")
    assert files.requested == [] and rows(app) == []
    result = invoke(app, files.url("/sitemap.xml"), "--allow-private-hosts")
    assert result.exit_code == 0, result.output
    assert [row.url for row in rows(app)] == ["https://example.com/remote"]


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("notxml.xml", b"just some text", "is not valid XML"),
        ("bomb.xml", BILLION_LAUGHS, "declares the entity 'lol'"),
        ("dtd.xml", DTD_ONLY, "declares a DTD"),
        ("atom.xml", b'<feed xmlns="http://www.w3.org/2005/Atom"/>', "root element is <feed>"),
        ("bad.gz", b"\x1f\x8b\x08\x00garbage", "is not a valid gzip file"),
    ],
)
def test_refused_documents(make_app, tmp_path, name, data, message):
    path = tmp_path / name
    path.write_bytes(data)
    app = make_app()
    assert_one_line_error(invoke(app, str(path)), message)
    assert rows(app) == []


def test_missing_file(make_app, tmp_path):
    assert_one_line_error(invoke(make_app(), str(tmp_path / "nope.xml")), "nope.xml: no such file")


def test_bad_since(make_app, tmp_path):
    path = tmp_path / "sitemap.xml"
    path.write_bytes(urlset("https://example.com/a"))
    app = make_app()
    assert_one_line_error(invoke(app, str(path), "--since", "yesterday"), "--since: cannot read 'yesterday'")
    assert rows(app) == []


def test_missing_tables(make_app, tmp_path):
    path = tmp_path / "sitemap.xml"
    path.write_bytes(urlset("https://example.com/a"))
    app = make_app(create_tables=False, INDEXNOW_TABLE_PREFIX=f"{RUN_PREFIX}nosuch_")
    assert_one_line_error(invoke(app, str(path)), "run `flask indexnow init-db`")
