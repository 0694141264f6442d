"""SPEC §8, §11: ``status.json`` carries every count the page shows."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

import pytest

from flask_indexnow.stats import CHART_HOURS

from .conftest import PREFIX, history_row, insert, queue_row

pytestmark = pytest.mark.every_backend  # the counting and bucketing SQL differs by database


def fill(app, now: datetime) -> None:
    insert(app, "Queue",
           queue_row("https://example.com/due", when=now - timedelta(minutes=10)),
           queue_row("https://example.com/wait", when=now + timedelta(hours=1)),
           queue_row("https://example.com/busy", "processing", when=now),
           queue_row("https://example.com/bad", "failed", when=now, attempts=1, http_status=400, error="HTTP 400"))
    insert(app, "History",
           history_row("https://example.com/1", when=now - timedelta(hours=1)),
           history_row("https://example.com/2", when=now - timedelta(hours=1), http_status=202),
           history_row("https://example.com/3", "retry", when=now - timedelta(hours=3), http_status=500),
           history_row("https://example.com/bad", "failed", when=now, http_status=400),
           history_row("https://staging.example.org/4", "dry_run", when=now, http_status=None),
           history_row("https://example.com/5", when=now - timedelta(days=5)))
    insert(app, "Job",
           {"handler": "indexnow.process_queue", "queue": "default", "status": "pending", "attempts": 0,
            "max_attempts": 3, "available_at": now, "created_at": now})
    insert(app, "Schedule",
           {"handler": "indexnow.process_queue", "queue": "default", "kind": "interval", "expression": "1 minute",
            "timezone": "UTC", "overlap": "skip", "next_run": now, "enabled": True, "created_at": now})


def test_every_count(status_app, clock):
    fill(status_app, clock.now)
    response = status_app.test_client().get(PREFIX + "/status.json")
    assert response.status_code == 200 and response.mimetype == "application/json"
    data = response.get_json()
    assert data["queue"] == {"pending": 2, "processing": 1, "failed": 1, "total": 4, "due_now": 1, "waiting": 1,
                             "oldest_due_age_seconds": 600.0, "inbox": 0}
    assert data["history_24h"] == {"success": 2, "retry": 1, "failed": 1, "dry_run": 1, "skipped": 0}
    assert data["jobs"] == {"pending": 1, "processing": 0, "completed": 0, "failed": 0, "expired": 0,
                            "schedules": 1, "schedules_enabled": 1}
    assert data["key_states"] == {"unknown": 1, "pending": 1, "verified": 0, "rejected": 0}
    assert [h["host"] for h in data["hosts"]] == ["example.com", "staging.example.org"]
    assert len(data["deliveries_per_hour"]) == CHART_HOURS
    assert sum(b["success"] for b in data["deliveries_per_hour"]) == 2
    assert {c["name"] for c in data["checks"]} >= {"key", "key_file", "endpoint", "cache", "scheduler"}
    assert data["verdict"]["level"] == "warning" and data["verdict"]["title"] == "Needs attention"
    assert data["endpoint_paused_until"] is None
    assert data["enabled"] is True and data["dry_run"] is False


def test_page_and_json_agree(status_app, clock):
    """Each number on the page's cards and headings comes from the JSON's counts."""
    fill(status_app, clock.now)
    client = status_app.test_client()
    data = client.get(PREFIX + "/status.json").get_json()
    page = client.get(PREFIX + "/").get_data(as_text=True)
    q, h, j = data["queue"], data["history_24h"], data["jobs"]

    def value(card: str) -> str:
        match = re.search(rf'id="{card}">.*?<span class="value">([^<]*)</span>', page, re.S)
        assert match
        return match.group(1).strip()

    assert value("count-pending") == str(q["pending"])
    assert f'id="count-due">{q["due_now"]}<' in page and f'id="count-waiting">{q["waiting"]}<' in page
    assert value("count-processing") == str(q["processing"])
    assert value("count-failed") == str(q["failed"])
    assert value("oldest-due") == "10 min" and q["oldest_due_age_seconds"] == 600
    assert value("count-delivered") == str(h["success"])
    assert f"{h['retry']} retried · {h['failed']} failed · {h['dry_run']} dry run" in page
    assert (f"{j['pending']} pending · {j['processing']} processing · {j['completed']} completed · "
            f"{j['failed']} failed") in page
    assert f"{j['schedules_enabled']} of {j['schedules']} enabled" in page
    assert f"Retry failed ({q['failed']})" in page
    totals = {s: sum(b[s] for b in data["deliveries_per_hour"]) for s in ("success", "retry", "failed")}
    assert f"success {totals['success']}" in page and f"retry {totals['retry']}" in page
    for check in data["checks"]:
        assert f'id="check-{check["name"]}"' in page
    for reason in data["verdict"]["reasons"]:
        assert reason.replace("“", "").replace("”", "")[:30] in page.replace("“", "").replace("”", "")


def test_deliveries_per_hour_buckets(status_app, clock):
    clock.set(datetime(2024, 3, 10, 14, 25, tzinfo=timezone.utc))
    now = clock.now
    insert(status_app, "History",
           history_row("https://example.com/a", when=datetime(2024, 3, 10, 14, 0, 0, tzinfo=timezone.utc)),
           history_row("https://example.com/b", when=datetime(2024, 3, 10, 13, 59, 59, 999000, tzinfo=timezone.utc)),
           history_row("https://example.com/c", "retry", when=datetime(2024, 3, 10, 13, 0, tzinfo=timezone.utc)),
           history_row("https://example.com/d", "failed", when=datetime(2024, 3, 7, 15, 0, tzinfo=timezone.utc)),
           history_row("https://example.com/too-old", when=datetime(2024, 3, 7, 14, 59, tzinfo=timezone.utc)))
    buckets = status_app.test_client().get(PREFIX + "/status.json").get_json()["deliveries_per_hour"]
    assert len(buckets) == 72
    assert buckets[0]["hour"] == "2024-03-07T15:00:00+00:00" and buckets[0]["failed"] == 1
    assert buckets[-1]["hour"] == "2024-03-10T14:00:00+00:00"
    assert buckets[-1] == {"hour": "2024-03-10T14:00:00+00:00", "success": 1, "retry": 0, "failed": 0,
                           "dry_run": 0, "skipped": 0}
    assert buckets[-2] == {"hour": "2024-03-10T13:00:00+00:00", "success": 1, "retry": 1, "failed": 0,
                           "dry_run": 0, "skipped": 0}
    assert sum(b["success"] for b in buckets) == 2  # the row from before the window is left out
    assert now.hour == 14


def test_cli_status_json_shares_the_counts(status_app, clock):
    import json

    fill(status_app, clock.now)
    result = status_app.test_cli_runner().invoke(args=["indexnow", "status", "--json"])
    assert result.exit_code == 0, result.output
    cli = json.loads(result.output)
    web = status_app.test_client().get(PREFIX + "/status.json").get_json()
    assert cli == web  # one document (the movable clock stands still: generated_at agrees too)
