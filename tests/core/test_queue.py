"""SPEC §3: the direct API, dedup by (host, url), last event wins."""

from __future__ import annotations

from datetime import timedelta

import pytest
import sqlalchemy as sa
from flask import Flask

from flask_indexnow import IndexNow, InvalidURLError

from ..conftest import rows

pytestmark = pytest.mark.every_backend  # each database has its own upsert


def ext(app: Flask) -> IndexNow:
    return app.extensions["indexnow"].extension  # type: ignore[no-any-return]


def test_enqueue_returns_the_normalised_url(app: Flask) -> None:
    assert ext(app).enqueue("https://Example.com/a#top") == "https://example.com/a"
    assert [(r.host, r.url, r.action, r.attempts) for r in rows(app)] == [
        ("example.com", "https://example.com/a", "update", 0)
    ]


def test_saving_again_updates_the_same_row(app: Flask, clock) -> None:
    ext(app).enqueue("https://example.com/a")
    first = rows(app)[0]
    clock.advance(30)
    ext(app).enqueue("https://example.com/a", "delete")
    second = rows(app)
    assert len(second) == 1
    assert second[0].id == first.id
    assert second[0].action == "delete"
    assert second[0].created_at == first.created_at
    assert second[0].updated_at == clock.now


def test_same_path_on_two_hosts_is_two_rows(app: Flask) -> None:
    ext(app).enqueue("https://example.com/a")
    ext(app).enqueue("https://example.org/a")
    assert sorted(r.host for r in rows(app)) == ["example.com", "example.org"]


def test_future_available_at_waits_and_delete_never_does(app: Flask, clock) -> None:
    later = clock.now + timedelta(hours=3)
    ext(app).enqueue("https://example.com/a", available_at=later)
    assert rows(app)[0].available_at == later
    ext(app).enqueue("https://example.com/a", "delete", available_at=later)
    assert rows(app)[0].available_at == clock.now


def test_invalid_url_raises_and_writes_nothing(app: Flask) -> None:
    with pytest.raises(InvalidURLError):
        ext(app).enqueue("http://10.0.0.1/admin")
    assert rows(app) == []


def test_invalid_action_raises(app: Flask) -> None:
    with pytest.raises(ValueError, match="action"):
        ext(app).enqueue("https://example.com/a", "refresh")
    assert rows(app) == []


def test_commit_false_joins_the_callers_transaction(app: Flask) -> None:
    db = app.extensions["indexnow"].db
    ext(app).enqueue("https://example.com/a", commit=False)
    db.session.rollback()
    assert rows(app) == []
    ext(app).enqueue("https://example.com/b", commit=False)
    db.session.commit()
    assert [r.url for r in rows(app)] == ["https://example.com/b"]


def test_commit_true_commits(app: Flask) -> None:
    ext(app).enqueue("https://example.com/a")
    app.extensions["indexnow"].db.session.rollback()
    assert len(rows(app)) == 1


def test_disabled_enqueue_is_a_no_op(make_app) -> None:
    app = make_app(INDEXNOW_ENABLED=False)
    with app.app_context():
        assert ext(app).enqueue("https://example.com/a") is None
        assert rows(app) == []


def test_enqueue_many_dedups_and_reports(app: Flask) -> None:
    result = ext(app).enqueue_many([
        "https://example.com/1", "https://example.com/2", "https://example.com/1#again",
        "http://localhost/x", "not a url",
    ])
    assert result.queued == 2
    assert [url for url, _ in result.rejected] == ["http://localhost/x", "not a url"]
    assert sorted(r.url for r in rows(app)) == ["https://example.com/1", "https://example.com/2"]


def test_enqueue_many_large_batch(app: Flask) -> None:
    urls = [f"https://example.com/p/{n}" for n in range(2_345)]
    assert ext(app).enqueue_many(urls).queued == len(urls)
    assert len(rows(app)) == len(urls)
    assert ext(app).enqueue_many(urls, "delete").queued == len(urls)
    assert {r.action for r in rows(app)} == {"delete"}
    assert len(rows(app)) == len(urls)


def test_dedup_is_enforced_by_the_database(app: Flask) -> None:
    """Even a writer that bypasses the API cannot create a second row for a URL."""
    ext(app).enqueue("https://example.com/a")
    row = rows(app)[0]
    table = app.extensions["indexnow"].models.Queue.__table__
    values = {c: getattr(row, c) for c in row._fields if c != "id"}
    with pytest.raises(sa.exc.IntegrityError):
        with app.extensions["indexnow"].db.engine.begin() as connection:
            connection.execute(table.insert().values(**values))
