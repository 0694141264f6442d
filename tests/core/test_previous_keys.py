"""Key rotation without a gap (issue 20): INDEXNOW_PREVIOUS_KEYS are served, never submitted; `key rotate`."""

from __future__ import annotations

import re

import pytest

from flask_indexnow.errors import ConfigurationError

from ..conftest import KEY
from ..web.conftest import PREFIX, allow

OLD = "0ld-key-1234abcd"
OLDER = "older0key0000001"


def ext(app):
    return app.extensions["indexnow"].extension


def test_previous_keys_are_served_and_never_submitted(make_app, endpoint, clock):
    app = make_app(INDEXNOW_PREVIOUS_KEYS=[OLD, OLDER])
    client = app.test_client()
    for key in (KEY, OLD, OLDER):
        response = client.get(f"/{key}.txt", base_url="https://example.com")
        assert (response.status_code, response.get_data(as_text=True)) == (200, key)
        assert response.headers["X-Robots-Tag"] == "noindex"
    assert client.get("/unknown-key-123.txt").status_code == 404
    with app.app_context():
        ext(app).enqueue("https://example.com/a")
        ext(app).enqueue("https://example.org/b")
        assert ext(app).process_queue().succeeded == 2
    assert {r.key for r in endpoint.received} == {KEY}
    assert {r.key_location for r in endpoint.received} == {f"https://example.com/{KEY}.txt",
                                                          f"https://example.org/{KEY}.txt"}


def test_the_status_page_lists_the_previous_keys(make_app):
    app = allow(make_app(INDEXNOW_PREVIOUS_KEYS=f"{OLD}, {OLDER}"))  # one string, as from the environment
    data = app.test_client().get(PREFIX + "/status.json").get_json()
    [check] = [c for c in data["checks"] if c["name"] == "key"]
    assert check["ok"] and f"INDEXNOW_PREVIOUS_KEYS): {OLD}, {OLDER}." in check["message"]
    assert OLD in app.test_client().get(PREFIX + "/").get_data(as_text=True)


@pytest.mark.parametrize(("value", "message"), [
    ([OLD, "short"], "INDEXNOW_PREVIOUS_KEYS[1]: a key must be 8-128 characters"),
    ([KEY], "INDEXNOW_PREVIOUS_KEYS[0] is INDEXNOW_KEY itself"),
    ({"a": OLD}, "INDEXNOW_PREVIOUS_KEYS must be a list of keys"),
    ([OLD, "bad key!"], "INDEXNOW_PREVIOUS_KEYS[1]"),
])
def test_a_bad_previous_key_fails_init_app_naming_it(make_app, value, message):
    with pytest.raises(ConfigurationError) as info:
        make_app(INDEXNOW_PREVIOUS_KEYS=value)
    assert message in str(info.value)


def _rotate(app):
    result = app.test_cli_runner().invoke(args=["indexnow", "key", "rotate"])
    assert result.exit_code == 0, result.output
    return result


def test_rotate_prints_a_fresh_key_and_the_two_settings_and_changes_nothing(make_app, tmp_path):
    app = make_app(INDEXNOW_PREVIOUS_KEYS=[OLDER])
    before_files = sorted(p.name for p in tmp_path.iterdir())
    before_config = dict(app.config)
    settings = app.extensions["indexnow"].settings
    first, second = _rotate(app), _rotate(app)
    # The settings on stdout; the comment lines (stderr) start with "#" (click before 8.2 mixes the two).
    lines = [line for line in first.stdout.strip().splitlines() if not line.startswith("#")]
    assert len(lines) == 2
    new_key = re.fullmatch(r"INDEXNOW_KEY = '([0-9a-f]{32})'", lines[0])
    assert new_key is not None
    assert lines[1] == f"INDEXNOW_PREVIOUS_KEYS = [{KEY!r}, {OLDER!r}]"
    assert "Nothing was changed" in first.output
    assert second.stdout.splitlines()[0] != lines[0]  # a fresh key each time
    assert sorted(p.name for p in tmp_path.iterdir()) == before_files
    assert dict(app.config) == before_config and app.extensions["indexnow"].settings is settings

    # The printed settings work as they are: the new key is submitted, the old ones still served.
    rotated = make_app(INDEXNOW_KEY=new_key[1], INDEXNOW_PREVIOUS_KEYS=[KEY, OLDER])
    client = rotated.test_client()
    assert all(client.get(f"/{k}.txt").status_code == 200 for k in (new_key[1], KEY, OLDER))
