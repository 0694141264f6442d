"""Issue 10.9: every numeric setting has a maximum; mistyped hosts fail at init_app."""

from __future__ import annotations

import pytest
from flask import Flask
from flask_sqlalchemy import SQLAlchemy

from flask_indexnow import ConfigurationError, IndexNow
from flask_indexnow.config import DEFAULTS, MAXIMA, load_settings

from ..conftest import KEY

#: The settings read as whole numbers (the others are seconds, fractions allowed).
INTEGER_KEYS = {key for key in MAXIMA
                if isinstance(getattr(load_settings({}), key.removeprefix("INDEXNOW_").lower()), int)}


def _app(**config: object) -> Flask:
    app = Flask(__name__)
    app.config.update(SQLALCHEMY_DATABASE_URI="sqlite://", **config)
    SQLAlchemy().init_app(app)
    return app


def refused(match: str, **config: object) -> str:
    """init_app fails with a ConfigurationError matching ``match``, and leaves nothing behind."""
    app = _app(**config)
    with pytest.raises(ConfigurationError, match=match) as info:
        IndexNow(app)
    assert "indexnow" not in app.extensions
    return str(info.value)


def test_every_numeric_setting_has_a_maximum() -> None:
    numeric = {key for key, (default, _) in DEFAULTS.items()
               if isinstance(default, (int, float)) and not isinstance(default, bool)}
    assert numeric == set(MAXIMA)
    for key, (maximum, words) in MAXIMA.items():
        assert DEFAULTS[key][0] <= maximum, key
        assert f"at most {words.split(':')[0].split(' ')[0]}" in DEFAULTS[key][1], key  # documented once, here


@pytest.mark.parametrize("key", sorted(MAXIMA))
def test_the_maximum_itself_is_accepted(key: str) -> None:
    maximum = MAXIMA[key][0]
    app = _app(**{key: maximum})
    IndexNow(app)
    attribute = key.removeprefix("INDEXNOW_").lower()
    assert getattr(app.extensions["indexnow"].settings, attribute) == maximum


@pytest.mark.parametrize("value", ["just over", 1e12, 1e300, "1e300", 10**400])
@pytest.mark.parametrize("key", sorted(MAXIMA))
def test_values_over_the_maximum_are_refused_naming_key_and_maximum(key: str, value: object) -> None:
    maximum, words = MAXIMA[key]
    if value == "just over":
        value = maximum + 1 if key in INTEGER_KEYS else maximum + 0.5
    if key in INTEGER_KEYS and value == "1e300":
        value = str(10**300)  # what an environment variable of digits looks like
    message = refused(key, **{key: value})
    assert message.startswith(f"{key} must be at most {words}, got ")


def test_the_overflows_of_the_issue_now_fail_at_start_up() -> None:
    for key, value in [("INDEXNOW_RETRY_DELAY", 1e300), ("INDEXNOW_STALE_AFTER", 1e12),
                       ("INDEXNOW_RESUBMIT_INTERVAL", 1e300)]:
        with pytest.raises(ConfigurationError, match=f"{key} must be at most"):
            load_settings({key: value})


@pytest.mark.parametrize(
    ("value", "hint"),
    [
        (["exa mple.com"], "not a valid name"),
        ("exa mple.com", "no dot"),  # a string is split at commas and spaces: "exa" is no public name
        (["https://example.com"], "without the scheme"),
        (["example.com/path"], "without a path"),
        (["*.example.com"], "wildcards are not supported"),
        (["example.com:8000"], "without a port"),
        (["localhost"], "reserved for local use"),
        (["127.0.0.1"], "not a public address"),
        (["example..com"], "not a valid name"),
        (["-example.com"], "not a valid name"),
        (["xn--abc.example"], "not a valid internationalised name"),
        ([""], "not a host name"),
        ([5], "not a host name"),
    ],
)
def test_mistyped_allowed_hosts_are_refused(value: object, hint: str) -> None:
    message = refused("INDEXNOW_ALLOWED_HOSTS", INDEXNOW_ALLOWED_HOSTS=value)
    assert hint in message and "\n" not in message


@pytest.mark.parametrize("value", [5, {"example.com": True}, 3.5])
def test_allowed_hosts_of_the_wrong_type_are_refused(value: object) -> None:
    refused("INDEXNOW_ALLOWED_HOSTS must be a list of host names, '\\*' or None", INDEXNOW_ALLOWED_HOSTS=value)


@pytest.mark.parametrize(
    ("host", "hint"),
    [
        ("https://example.com", "without the scheme"),
        ("*.example.com", "wildcards are not supported"),
        ("exa mple.com", "not a valid name"),
        ("example.com/blog", "without a path"),
        ("localhost", "reserved for local use"),
    ],
)
def test_mistyped_hosts_of_keys_are_refused(host: str, hint: str) -> None:
    message = refused("INDEXNOW_KEYS", INDEXNOW_KEYS={host: KEY})
    assert hint in message


@pytest.mark.parametrize("value", ["www.example.com", "ftp://example.com/", "https://", "https://user:pw@example.com/",
                                   "https://example.com:99999/", 5])
def test_a_bad_base_url_is_refused(value: object) -> None:
    refused("INDEXNOW_BASE_URL", INDEXNOW_BASE_URL=value)


def test_well_written_hosts_are_kept_in_their_canonical_form() -> None:
    settings = load_settings({"INDEXNOW_ALLOWED_HOSTS": ["Example.COM.", "b\u00fccher.example", "8.8.8.8",
                                                         "[2606:4700:4700:0::1111]"]})
    assert settings.allowed_hosts == frozenset({"example.com", "xn--bcher-kva.example", "8.8.8.8",
                                                "[2606:4700:4700::1111]"})
    from_env = load_settings({"INDEXNOW_ALLOWED_HOSTS": " example.com,www.example.com  blog.example.com "})
    assert from_env.allowed_hosts == frozenset({"example.com", "www.example.com", "blog.example.com"})
