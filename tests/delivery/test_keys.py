"""Many sites in one app: INDEXNOW_KEYS gives each host its own key (SPEC §11)."""

from __future__ import annotations

from flask_indexnow import signals

from ..conftest import KEY
from .conftest import ext, history_rows, queue_rows

KEY_A = "aaaaaaaa-1111-2222"
KEY_B = "BBBBBBBB33334444"


def test_each_batch_carries_its_hosts_key(make_app, endpoint, clock):
    app = make_app(INDEXNOW_KEY=None, INDEXNOW_KEYS={"example.com": KEY_A, "Other.ORG.": KEY_B})
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
        ext(app).enqueue("https://other.org/b")
        result = ext(app).process_queue()
    assert result.succeeded == 2
    sent = {r.json["host"]: (r.json["key"], r.json["keyLocation"]) for r in endpoint.received}
    assert sent == {
        "example.com": (KEY_A, f"https://example.com/{KEY_A}.txt"),
        "other.org": (KEY_B, f"https://other.org/{KEY_B}.txt"),
    }


def test_keys_override_the_default_key_for_their_hosts_only(make_app, endpoint, clock):
    app = make_app(INDEXNOW_KEYS={"example.com": KEY_A}, INDEXNOW_KEY_LOCATION="https://keys.example.net/{host}/{key}")
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
        ext(app).enqueue("https://other.org/b")
        ext(app).process_queue()
    sent = {r.json["host"]: (r.json["key"], r.json["keyLocation"]) for r in endpoint.received}
    assert sent == {
        "example.com": (KEY_A, f"https://keys.example.net/example.com/{KEY_A}"),
        "other.org": (KEY, f"https://keys.example.net/other.org/{KEY}"),
    }


def test_a_host_without_a_key_fails_clearly_and_others_go_on(make_app, endpoint, clock, caplog):
    failures: list[dict] = []
    app = make_app(INDEXNOW_KEY=None, INDEXNOW_KEYS={"example.com": KEY_A})
    with signals.delivery_failed.connected_to(lambda sender, **kw: failures.append(kw)), app.app_context():
        ext(app).enqueue("https://example.com/a")
        ext(app).enqueue_many(["https://nokey.org/1", "https://nokey.org/2"])
        result = ext(app).process_queue()
    assert (result.succeeded, result.failed, result.requests, result.skipped_reason) == (1, 2, 1, None)
    assert [r.json["host"] for r in endpoint.received] == ["example.com"]  # nothing sent for nokey.org
    failed = queue_rows(app)
    assert {row["url"] for row in failed} == {"https://nokey.org/1", "https://nokey.org/2"}
    for row in failed:
        assert (row["status"], row["attempts"], row["last_http_status"]) == ("failed", 1, None)
        assert "no valid IndexNow key for host nokey.org" in row["last_error"]
        assert "INDEXNOW_KEYS" in row["last_error"]
    assert sorted(h.status for h in history_rows(app)) == ["failed", "failed", "success"]
    assert [(f["host"], f["permanent"], f["status"]) for f in failures] == [("nokey.org", True, None)]
    assert "no valid IndexNow key for host nokey.org" in caplog.text


def test_keys_alone_are_enough_to_send(make_app, endpoint, clock):
    """Without INDEXNOW_KEY the pass is not refused as a whole when INDEXNOW_KEYS is set."""
    app = make_app(INDEXNOW_KEY=None, INDEXNOW_KEYS={"example.com": KEY_A})
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
        result = ext(app).process_queue()
    assert (result.skipped_reason, result.succeeded) == (None, 1)
