"""docs/monitoring.md says what the scrape exports: its label lists are the code's, its queue alert counts the inbox."""

from __future__ import annotations

import re
from pathlib import Path

from flask_indexnow.stats import JOB_STATUSES

from .helpers import TOKEN, scrape

DOC = (Path(__file__).parents[2] / "docs" / "monitoring.md").read_text(encoding="utf-8")


def row(metric: str) -> str:
    found = [line for line in DOC.splitlines() if line.startswith(f"| `{metric}` |")]
    assert len(found) == 1, metric
    return found[0]


def listed(metric: str, label: str) -> set[str]:
    """The values the table lists for ``label``: the backticked words in the parentheses after it."""
    cell = row(metric).split(f"`{label}` (", 1)[1]
    depth = 1
    for index, char in enumerate(cell):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0:
            cell = cell[:index]
            break
    return set(re.findall(r"`([a-z_]+)`", cell)) - {"INDEXNOW_VERIFY"}


def test_the_check_label_lists_every_check(make_app, endpoint):
    app = make_app(INDEXNOW_METRICS_TOKEN=TOKEN, INDEXNOW_VERIFY="app")  # robots is there with it
    exported = {dict(labels)["check"] for name, labels in scrape(app) if name == "indexnow_check_ok"}
    assert listed("indexnow_check_ok", "check") == exported


def test_the_job_status_label_lists_every_status():
    assert listed("indexnow_jobs", "status") == set(JOB_STATUSES)


def test_the_queue_alert_counts_the_inbox():
    """With no worker, pending stays 0 while the inbox grows: a rule on pending alone never fires."""
    rule = DOC.split("- alert: IndexNowQueueGrowing", 1)[1].split("- alert:", 1)[0]
    assert "indexnow_queue_oldest_due_age_seconds" in rule
    assert 'indexnow_queue_urls{status=~"pending|inbox"}' in rule
