"""No database transaction is open while a pass asks for its pages (INDEXNOW_VERIFY).

From inside the page's view, while the pass waits for it, the database is asked
whether a connection of the app holds a transaction (the probes of
``tests/delivery/test_no_transaction_during_post.py``, each shown first to see
one that is open).
"""

from __future__ import annotations

import pytest

from ..delivery.conftest import ext
from ..delivery.test_no_transaction_during_post import _make, _probe
from .site import BASE, add_site

pytestmark = pytest.mark.every_backend  # connections and transactions differ by database


def test_no_transaction_is_open_while_a_page_is_asked_for(make_app, endpoint, clock, backend):
    app = add_site(_make(make_app, backend, INDEXNOW_VERIFY="app"))
    seen: list[int] = []
    with app.app_context():
        ext(app).enqueue_many([f"{BASE}/probed/a", f"{BASE}/probed/b", f"{BASE}/noindex-meta"])
        count, hold = _probe(app, backend)
        connection, transaction = hold()  # the control: the probe sees a transaction that is open
        try:
            assert count() == 1
        finally:
            transaction.rollback()
            connection.close()

    @app.route("/probed/<name>")
    def probed(name: str) -> str:
        seen.append(count())
        return "<html><head></head><body>fine</body></html>"

    with app.app_context():
        result = ext(app).process_queue()
    assert (result.succeeded, result.skipped) == (2, 1)
    assert seen == [0, 0]
