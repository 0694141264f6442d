"""``status.json`` and ``flask indexnow status --json``: one document, one shipped JSON Schema.

The schema is read from the installed package (not from the source tree), so a
wheel without it fails here. Both outputs are validated against a *strict*
copy of it (no member the schema does not describe), so a member added to the
document without the schema fails too.
"""

from __future__ import annotations

import copy
import json
from datetime import timedelta
from typing import Any

import jsonschema
import pytest

from flask_indexnow.status.document import status_schema_text

from ..endpoint_server import Reply
from .conftest import PREFIX, extension, insert, queue_row
from .test_status_json import fill


def schema() -> dict[str, Any]:
    return json.loads(status_schema_text())  # type: ignore[no-any-return]


def strict(node: Any) -> Any:
    """The schema with ``additionalProperties: false`` on every object that lists its members."""
    node = copy.deepcopy(node)
    if isinstance(node, dict):
        if "properties" in node:
            node.setdefault("additionalProperties", False)
        return {k: strict(v) for k, v in node.items()}
    if isinstance(node, list):
        return [strict(v) for v in node]
    return node


def validate(document: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator.check_schema(schema())
    jsonschema.validate(document, strict(schema()), cls=jsonschema.Draft202012Validator,
                        format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


def both(app) -> tuple[dict[str, Any], dict[str, Any]]:
    web = app.test_client().get(PREFIX + "/status.json").get_json()
    result = app.test_cli_runner().invoke(args=["indexnow", "status", "--json"])
    assert result.exit_code == 0, result.output
    return web, json.loads(result.output)


@pytest.mark.every_backend  # each driver returns its own types
def test_cli_and_page_give_the_same_valid_document(make_app, clock):
    app = make_app(INDEXNOW_STATUS_URL_PREFIX=PREFIX)
    extension(app).status_auth(lambda: True)
    fill(app, clock.now)
    web, cli = both(app)
    validate(web)
    validate(cli)
    assert cli == web  # the movable clock stands still: even generated_at agrees
    assert "verdict" in cli and "endpoint_paused_until" in cli


def test_a_passing_check_reads_as_passing(status_app):
    web, cli = both(status_app)
    for document in (web, cli):
        checks = {c["name"]: c for c in document["checks"]}
        key = checks["key"]
        assert key["ok"] is True and key["status"] == "pass" and key["severity_if_failing"] == "error"
        assert "level" not in key
        assert all(c["status"] == "pass" for c in document["checks"] if c["ok"])
        assert document["verdict"]["level"] == "ok"


def test_a_failing_check_says_how_bad(make_app):
    app = make_app(INDEXNOW_KEY=None, INDEXNOW_DRY_RUN=True)
    extension(app).status_auth(lambda: True)
    web, cli = both(app)
    validate(web)
    assert web["checks"] == cli["checks"]
    checks = {c["name"]: c for c in web["checks"]}
    assert (checks["key"]["ok"], checks["key"]["status"]) == (False, "error")
    assert (checks["dry_run"]["ok"], checks["dry_run"]["status"]) == (False, "warning")
    assert web["verdict"]["level"] == "error"
    page = app.test_client().get(PREFIX + "/").get_data(as_text=True)
    assert 'class="check c-error" id="check-key"' in page
    assert 'class="check c-warning" id="check-dry_run"' in page


def test_the_429_pause_is_in_both(make_app, endpoint, clock):
    endpoint.default = Reply(429, headers={"Retry-After": "600"})
    app = make_app(INDEXNOW_RETRY_DELAY=60)
    extension(app).status_auth(lambda: True)
    with app.app_context():
        extension(app).enqueue("https://example.com/page")
        assert extension(app).process_queue().retried == 1
    web, cli = both(app)
    validate(web)
    validate(cli)
    assert cli["endpoint_paused_until"] == web["endpoint_paused_until"] == (clock.now + timedelta(seconds=600)).isoformat()
    assert cli["verdict"] == web["verdict"] and cli["verdict"]["title"] == "Needs attention"


@pytest.mark.parametrize("value", [0, 12])
def test_skipped_events_is_an_optional_count(status_app, value):
    web, _ = both(status_app)
    validate({**web, "skipped_events_24h": value})
    with pytest.raises(jsonschema.ValidationError):
        validate({**web, "skipped_events_24h": "many"})


def test_the_strict_schema_catches_an_undescribed_member(status_app, clock):
    insert(status_app, "Queue", queue_row("https://example.com/a", when=clock.now))
    web, _ = both(status_app)
    with pytest.raises(jsonschema.ValidationError):
        validate({**web, "surprise": 1})
    with pytest.raises(jsonschema.ValidationError):
        validate({**web, "queue": {**web["queue"], "surprise": 1}})
