"""Per-URL validation time of flask_indexnow.urls.check_url (µs, best of 5): `PYTHONPATH=. python scripts/time_check_url.py`."""
from __future__ import annotations

import timeit

from flask_indexnow.urls import check_url

ALLOWED = frozenset({"www.example.com", "example.com"})
CASES = {
    "typical": [f"https://www.example.com/articles/{n}/some-slug?page={n % 7}" for n in range(1000)],
    "with fragment/port": [f"https://example.com:8443/a/{n}#top" for n in range(1000)],
    "unicode host": [f"https://bücher.example/seite/{n}" for n in range(1000)],
}


def check_all(urls: list[str], allowed: frozenset[str] | None) -> None:
    for url in urls:
        check_url(url, allowed)


for name, urls in CASES.items():
    allowed = None if name == "unicode host" else ALLOWED
    best = min(timeit.repeat(lambda: check_all(urls, allowed), number=5, repeat=5)) / (5 * len(urls))  # noqa: B023
    print(f"{name:20s} {best * 1e6:6.2f} µs/URL")
