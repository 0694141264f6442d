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
for name, urls in CASES.items():
    allowed = None if name == "unicode host" else ALLOWED
    def run() -> None:
        for url in urls:
            check_url(url, allowed)
    best = min(timeit.repeat(run, number=5, repeat=5)) / (5 * len(urls))
    print(f"{name:20s} {best * 1e6:6.2f} µs/URL")
