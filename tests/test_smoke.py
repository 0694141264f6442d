from __future__ import annotations

import pytest

from flask_indexnow import IndexNow

from .conftest import rows

pytestmark = pytest.mark.every_backend  # the whole path once on each database


def test_enqueue_and_deliver(make_app, endpoint, clock):
    app = make_app()
    with app.app_context():
        ext: IndexNow = app.extensions["indexnow"].extension
        ext.enqueue("https://example.com/a")
        ext.enqueue("https://example.com/a", "delete")
        ext.enqueue("https://other.org/b")
        assert len(rows(app)) == 2
        result = ext.process_queue()
        assert result.succeeded == 2, result
        assert rows(app) == []
        assert len(rows(app, "History")) == 2
        assert sorted(endpoint.urls_received()) == ["https://example.com/a", "https://other.org/b"]
