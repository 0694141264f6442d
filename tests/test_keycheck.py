"""``flask indexnow key check`` against real key files served on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from flask_indexnow import clock
from flask_indexnow.keys.keycheck import check_key_files
from flask_indexnow.state import get_state

from .conftest import KEY
from .file_server import File, FileServer, closed_port, silent_port

TEXT = {"Content-Type": "text/plain; charset=utf-8"}


@pytest.fixture
def files() -> Iterator[FileServer]:
    server = FileServer().start()
    yield server
    server.stop()


def key_app(make_app, **config):
    """An app whose key location is plain http on the host given (tests serve it locally)."""
    return make_app(INDEXNOW_KEY_LOCATION="http://{host}/{key}.txt", **config)


def check(app, *hosts):
    with app.app_context():
        return check_key_files(get_state(), list(hosts) if hosts else None)


def codes(result):
    return [problem.code for problem in result.problems]


@pytest.mark.parametrize("body", [KEY.encode(), KEY.encode() + b"\n", b"\xef\xbb\xbf" + KEY.encode() + b"\r\n"])
def test_good_key_file(make_app, files, body):
    files.files[f"/{KEY}.txt"] = File(body, headers=TEXT)
    [result] = check(key_app(make_app), files.netloc)
    assert result.ok, result.problems
    assert (result.url, result.http_status) == (files.url(f"/{KEY}.txt"), 200)


def test_what_the_extension_serves_passes(make_app, files):
    app = make_app()
    served = app.test_client().get(f"/{KEY}.txt", base_url="https://example.com")
    assert served.status_code == 200
    files.files[f"/{KEY}.txt"] = File(served.data, headers={"Content-Type": served.headers["Content-Type"]})
    [result] = check(key_app(make_app), files.netloc)  # the same bytes and type, over a real socket
    assert result.ok, result.problems


def test_missing_key_file(make_app, files):
    [result] = check(key_app(make_app), files.netloc)
    assert codes(result) == ["missing"]
    assert result.http_status == 404
    assert "key file missing" in result.problems[0].message
    assert f"{KEY}.txt" in result.problems[0].fix


def test_wrong_content(make_app, files):
    files.files[f"/{KEY}.txt"] = File(b"0123456789abcdef", headers=TEXT)
    [result] = check(key_app(make_app), files.netloc)
    assert codes(result) == ["wrong_content"]
    assert f"expected the key {KEY!r}, got '0123456789abcdef'" in result.problems[0].message


def test_key_with_other_text_is_wrong_content(make_app, files):
    files.files[f"/{KEY}.txt"] = File(f"key: {KEY}".encode(), headers=TEXT)
    [result] = check(key_app(make_app), files.netloc)
    assert codes(result) == ["wrong_content"]


def test_wrong_content_type(make_app, files):
    files.files[f"/{KEY}.txt"] = File(KEY.encode(), headers={"Content-Type": "application/octet-stream"})
    [result] = check(key_app(make_app), files.netloc)
    assert codes(result) == ["wrong_content_type"]
    assert "text/plain" in result.problems[0].fix


def test_soft_404_page_has_both_problems(make_app, files):
    files.files[f"/{KEY}.txt"] = File(b"<html>Page not found</html>", headers={"Content-Type": "text/html"})
    [result] = check(key_app(make_app), files.netloc)
    assert codes(result) == ["wrong_content_type", "wrong_content"]


def test_redirect_is_a_problem_and_not_followed(make_app, files):
    files.files[f"/{KEY}.txt"] = File(b"", 301, {"Location": f"/elsewhere/{KEY}.txt"})
    files.files[f"/elsewhere/{KEY}.txt"] = File(KEY.encode(), headers=TEXT)
    [result] = check(key_app(make_app), files.netloc)
    assert codes(result) == ["redirect"]
    assert f"redirect to /elsewhere/{KEY}.txt" in result.problems[0].message
    assert files.requested == [f"/{KEY}.txt"]


@pytest.mark.parametrize(("status", "code"), [(403, "blocked"), (401, "blocked"), (500, "http_error"), (410, "http_error")])
def test_other_statuses(make_app, files, status, code):
    files.files[f"/{KEY}.txt"] = File(b"no", status, TEXT)
    [result] = check(key_app(make_app), files.netloc)
    assert codes(result) == [code]
    assert result.http_status == status


def test_unreachable(make_app):
    app = key_app(make_app, INDEXNOW_TIMEOUT=0.3)
    [refused] = check(app, f"127.0.0.1:{closed_port()}")
    assert codes(refused) == ["unreachable"]
    assert "cannot connect" in refused.problems[0].message
    with silent_port() as port:
        [silent] = check(app, f"127.0.0.1:{port}")
    assert codes(silent) == ["unreachable"]
    assert "no answer within 0.3s" in silent.problems[0].message


def test_private_host_refused_unless_allowed(make_app, files):
    files.files[f"/{KEY}.txt"] = File(KEY.encode(), headers=TEXT)
    [result] = check(key_app(make_app, INDEXNOW_ALLOW_PRIVATE_ENDPOINT=False), files.netloc)
    assert codes(result) == ["refused"]
    assert "not a public address" in result.problems[0].message
    assert "INDEXNOW_ALLOW_PRIVATE_ENDPOINT" in result.problems[0].fix
    assert files.requested == []


def test_bad_host_and_missing_key(make_app):
    [bad] = check(key_app(make_app), "exa mple.com/x")
    assert codes(bad) == ["invalid_host"]
    [no_key] = check(key_app(make_app, INDEXNOW_KEY=None), "example.com")
    assert codes(no_key) == ["no_key"]


def test_default_hosts_come_from_queue_history_and_settings(make_app, files):
    app = make_app(
        INDEXNOW_KEY_LOCATION=f"http://{files.netloc}/{{host}}/{{key}}.txt",
        INDEXNOW_KEYS={"shop.example.net": "shopkey-12345"},
        INDEXNOW_ALLOWED_HOSTS=["example.com", "news.example.org", "blog.example.com", "shop.example.net"],
    )
    files.files[f"/example.com/{KEY}.txt"] = File(KEY.encode(), headers=TEXT)
    files.files[f"/news.example.org/{KEY}.txt"] = File(KEY.encode(), headers=TEXT)
    files.files["/shop.example.net/shopkey-12345.txt"] = File(b"shopkey-12345", headers=TEXT)
    with app.app_context():
        state = get_state()
        state.extension.enqueue("https://example.com/a")
        history = state.models.History.__table__
        with state.engine().begin() as connection:
            connection.execute(sa.insert(history).values(
                host="news.example.org", url="https://news.example.org/x", action="update",
                status="success", http_status=200, attempts=1, created_at=clock.utcnow(),
            ))
        results = check_key_files(state)
    assert [(r.host, codes(r)) for r in results] == [
        ("blog.example.com", ["missing"]),
        ("example.com", []),
        ("news.example.org", []),
        ("shop.example.net", []),
    ]


# -- the command -------------------------------------------------------------------------------


def invoke(app, *args):
    return app.test_cli_runner().invoke(args=["indexnow", "key", "check", *args])


def test_command_all_good(make_app, files):
    files.files[f"/{KEY}.txt"] = File(KEY.encode(), headers=TEXT)
    result = invoke(key_app(make_app), "--host", files.netloc)
    assert result.exit_code == 0, result.output
    assert result.output == f"[ok ] {files.netloc}: {files.url(f'/{KEY}.txt')} serves the key\n"


def test_command_reports_problems_and_exits_1(make_app, files):
    files.files[f"/{KEY}.txt"] = File(KEY.encode(), headers=TEXT)
    dead = f"127.0.0.1:{closed_port()}"
    result = invoke(key_app(make_app), "--host", files.netloc, "--host", dead)
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert lines[0].startswith(f"[ok ] {files.netloc}")
    assert lines[1].startswith(f"[ERR] {dead} (http://{dead}/{KEY}.txt): unreachable")
    assert lines[2].startswith("      Fix: ")
    assert lines[-1] == "Error: 1 of 2 host(s) have a key file problem"
    assert "Traceback" not in result.output


def test_command_without_hosts(make_app):
    result = invoke(key_app(make_app))
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        "Error: no host to check: none in the queue, history, INDEXNOW_KEYS or INDEXNOW_ALLOWED_HOSTS; pass --host"
    ]
