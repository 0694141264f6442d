"""A :class:`Snapshot` as Prometheus metric families (``prometheus_client``, the ``[metrics]`` extra).

Only a scrape imports this module. The collector is registered on a
registry made for that one request: nothing is kept in the process (no
global registry, no counter that would be one process's share of the work).
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from .snapshot import Sample, Snapshot

#: name → (help, label names, Snapshot attribute, counter?). Labels are bounded: no URL, no host.
METRICS: dict[str, tuple[str, tuple[str, ...], str, bool]] = {
    "indexnow_queue_urls": (
        "Queue rows per status and engine (exact up to 10000 rows, then the database's estimate)",
        ("status", "engine"), "queue_urls", False),
    "indexnow_queue_oldest_due_age_seconds": (
        "Seconds the oldest due pending row, or the oldest event still in the inbox, has waited (0 when none)", ("engine",), "oldest_due_age", False),
    "indexnow_deliveries": (
        "URLs delivered per outcome (history status) and engine, kept in the database: never lowered by pruning",
        ("status", "engine"), "deliveries", True),
    "indexnow_last_success_timestamp_seconds": (
        "When the last successful delivery to the engine was written (Unix time; 0 when it never succeeded)", ("engine",), "last_success", False),
    "indexnow_endpoint_paused": (
        "1 while the engine asked to pause (429, or 5xx with Retry-After), else 0", ("engine",), "paused", False),
    "indexnow_request_budget_remaining": (
        "POSTs left in this minute's INDEXNOW_REQUESTS_PER_MINUTE budget", ("engine",), "budget_remaining", False),
    "indexnow_jobs": ("Jobs per status and queue", ("status", "queue"), "jobs", False),
    "indexnow_schedule_next_run_timestamp_seconds": (
        "When each enabled schedule runs next (Unix time)", ("schedule",), "schedule_next_run", False),
    "indexnow_schedule_last_outcome": (
        "1 for the outcome of each schedule's last occurrence, 0 for the others", ("schedule", "outcome"),
        "schedule_last_outcome", False),
    "indexnow_check_ok": ("1 when the status page's configuration check passes, else 0", ("check",), "checks", False),
}


class SnapshotCollector(Collector):
    """Yields one metric family per entry of :data:`METRICS`, from one :class:`Snapshot`."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot

    def collect(self) -> Iterator[Metric]:
        for name, (help_text, labels, attribute, counter) in METRICS.items():
            samples: list[Sample] = getattr(self.snapshot, attribute)
            family: GaugeMetricFamily | CounterMetricFamily
            if counter:
                family = CounterMetricFamily(name, help_text, labels=labels)
            else:
                family = GaugeMetricFamily(name, help_text, labels=labels)
            for values, value in samples:
                family.add_metric(list(values), value)
            yield family
