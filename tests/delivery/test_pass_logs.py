"""Logs that help (issue 13 §5): dry runs show the would-be POST; every line names host and endpoint."""

from __future__ import annotations

import logging

import pytest

from flask_indexnow.delivery.passlog import url_list
from flask_indexnow.safetext import safe_text
from flask_indexnow.testing import Reply

from .conftest import ext


def _batch_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if getattr(r, "indexnow_host", None) is not None]


def test_dry_run_logs_each_would_be_post_with_its_urls(make_app, endpoint, clock, caplog):
    app = make_app(INDEXNOW_DRY_RUN=True)
    caplog.set_level(logging.INFO, logger="flask_indexnow")
    with app.app_context():
        ext(app).enqueue_many([f"https://example.com/p{n:02d}" for n in range(13)])
        ext(app).enqueue("https://other.org/only")
        ext(app).process_queue()
    assert endpoint.requests == []
    lines = {r.indexnow_host: r for r in _batch_records(caplog)}  # type: ignore[attr-defined]
    assert set(lines) == {"example.com", "other.org"}
    big = lines["example.com"]
    assert big.levelno == logging.INFO and big.indexnow_endpoint == endpoint.url  # type: ignore[attr-defined]
    text = big.getMessage()
    assert text.startswith(f"IndexNow dry run host=example.com endpoint={endpoint.url} count=13 (nothing sent) urls=")
    assert text.endswith(" … and 3 more")
    shown = text.split(" urls=", 1)[1].removesuffix(" … and 3 more").split(", ")
    assert len(shown) == 10 and set(shown) < {f"https://example.com/p{n:02d}" for n in range(13)}
    assert lines["other.org"].getMessage().endswith("count=1 (nothing sent) urls=https://other.org/only")


def test_every_batch_line_names_host_and_endpoint(make_app, endpoint, clock, caplog):
    app = make_app(INDEXNOW_KEYS={"example.com": "a1b2c3d4e5f6"}, INDEXNOW_KEY=None)
    caplog.set_level(logging.INFO, logger="flask_indexnow")
    endpoint.default = Reply(500, body=b"busy")
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
        ext(app).enqueue("https://nokey.org/b")  # fails before any POST: no key for this host
        ext(app).process_queue()
    records = _batch_records(caplog)
    assert {r.indexnow_host for r in records} == {"example.com", "nokey.org"}  # type: ignore[attr-defined]
    for record in records:
        text = record.getMessage()
        assert f"host={record.indexnow_host}" in text and f"endpoint={endpoint.url}" in text  # type: ignore[attr-defined]
    [summary] = [r.getMessage() for r in caplog.records if r.getMessage().startswith("IndexNow pass ")]
    assert f"endpoint={endpoint.url}" in summary


def test_a_failure_carries_the_start_of_the_answer_made_safe(make_app, endpoint, clock, caplog):
    hostile = "\x1b[2J\x1b]0;owned\x07Access\r\ndenied\u202egnp.exe\u200b " + "x" * 400
    endpoint.default = Reply(400, body=hostile.encode("utf-8"))
    app = make_app()
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
        ext(app).process_queue()
    [record] = _batch_records(caplog)
    error = record.getMessage().split(" error=", 1)[1]
    assert error.startswith("HTTP 400: [2J ]0;owned Access deniedgnp.exe x")  # format characters go, controls become spaces
    assert len(error) == 200 and error.endswith("…")
    assert not any(ord(ch) < 32 or 0x7F <= ord(ch) < 0xA0 or ch in "\u202e\u200b" for ch in record.getMessage())


def test_safe_text_and_url_list() -> None:
    assert safe_text("a\tb\x00c\u2028d\u2066e  f") == "a b c de f"  # controls become spaces, format characters go
    assert safe_text("y" * 300, 200) == "y" * 199 + "…"
    assert safe_text(None) == ""
    assert url_list(["u1", "u2"], shown=3) == "u1, u2"
    assert url_list([f"u{n}" for n in range(5)], shown=2) == "u0, u1 … and 3 more"
