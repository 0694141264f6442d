"""Reading the metrics route as Prometheus does: through prometheus_client's own parser."""

from __future__ import annotations

from flask import Flask
from prometheus_client.parser import text_string_to_metric_families

PREFIX = "/indexnow"
TOKEN = "scrape-token-0123456789"


def scrape(app: Flask, token: str = TOKEN) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of one scrape: (sample name, sorted labels) → value."""
    response = app.test_client().get(PREFIX + "/metrics", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200, response.get_data(as_text=True)
    samples = {}
    for family in text_string_to_metric_families(response.get_data(as_text=True)):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def value(samples: dict, name: str, **labels: str) -> float:
    """One sample's value (KeyError, naming it, when the scrape has no such series)."""
    key = (name, tuple(sorted(labels.items())))
    if key not in samples:
        raise KeyError(f"no sample {name}{labels}; the scrape has {sorted(k for k in samples if k[0] == name)}")
    return samples[key]
