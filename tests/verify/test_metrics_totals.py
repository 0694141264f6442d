"""The pages verification skips count in indexnow_deliveries_total{status="skipped"} (metrics)."""

from __future__ import annotations

import pytest

from ..metrics.helpers import TOKEN, scrape, value
from .conftest import send

pytestmark = pytest.mark.every_backend


def test_skipped_pages_are_counted(site, endpoint, clock):
    app = site(INDEXNOW_METRICS_TOKEN=TOKEN)
    send(app, "/noindex-meta", "/canonical", "/ok")
    samples = scrape(app)
    assert value(samples, "indexnow_deliveries_total", status="skipped", engine=endpoint.url) == 2
    assert value(samples, "indexnow_deliveries_total", status="success", engine=endpoint.url) == 1
