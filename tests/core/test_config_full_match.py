"""Issue 18 (bad input): every validation is a full match, and every setting names itself.

A pattern ending in ``$`` also matches before a final newline: a key read
from a secrets file (``"…\\n"``) was reported valid and its key file served at
``/…\\n.txt``; a prefix ``"site_\\n"`` broke every statement.
"""

from __future__ import annotations

import pytest
from flask import Flask
from flask_sqlalchemy import SQLAlchemy

from flask_indexnow import ConfigurationError, IndexNow, InvalidURLError
from flask_indexnow.config import key_problem, load_settings
from flask_indexnow.retry import parse_retry_after
from flask_indexnow.sitemap.dates import parse_w3c_datetime
from flask_indexnow.urls import QueryFilter, canonical_host, check_host

KEY = "3f1c0d7e8a9b4c5d"


def _app(**config: object) -> Flask:
    app = Flask(__name__)
    app.config.update(SQLALCHEMY_DATABASE_URI="sqlite://", **config)
    SQLAlchemy().init_app(app)
    return app


@pytest.mark.parametrize("key", [KEY + "\n", KEY + "\r\n", " " + KEY, KEY + " "])
def test_a_key_with_a_newline_fails_init_app_naming_the_key(key: str) -> None:
    with pytest.raises(ConfigurationError, match="INDEXNOW_KEY has white space"):
        IndexNow(_app(INDEXNOW_KEY=key))
    assert key_problem(key) is not None  # and the soft check no longer calls it valid


def test_a_newline_is_no_key_character() -> None:
    assert key_problem(KEY) is None
    assert key_problem(KEY + "\n") is not None
    with pytest.raises(ConfigurationError, match=r"INDEXNOW_KEYS\['example.com'\]"):
        load_settings({"INDEXNOW_KEYS": {"example.com": KEY + "\n"}})


@pytest.mark.parametrize("prefix", ["site_\n", "site_\r", "\nsite_", "Site_\n"])
def test_a_prefix_with_a_newline_is_refused(prefix: str) -> None:
    with pytest.raises(ConfigurationError, match="INDEXNOW_TABLE_PREFIX"):
        IndexNow(_app(INDEXNOW_TABLE_PREFIX=prefix))
    assert load_settings({"INDEXNOW_TABLE_PREFIX": "Site_"}).table_prefix == "Site_"


def test_host_labels_dates_and_retry_after_are_matched_whole() -> None:
    for host in ("example.com\n", "example\n.com", "1.2.3.4\n", "0x7f.1\n"):
        with pytest.raises(InvalidURLError):
            canonical_host(host)
        with pytest.raises(InvalidURLError):
            check_host(host)
    assert parse_w3c_datetime("2024-05-01\n") is not None  # stripped first, as documented
    assert parse_w3c_datetime("2024-05-01\n2") is None
    assert parse_retry_after("600\n") == 600  # a header value is stripped first
    assert parse_retry_after("600\n7") is None


@pytest.mark.parametrize("value", [3, True, ["RedisCache"], "", "NoSuchCache", "flask_caching.backends.Nope",
                                   "no_such_module.Cache"])
def test_a_cache_type_of_the_wrong_type_or_unknown_names_the_key(value: object) -> None:
    with pytest.raises(ConfigurationError, match="INDEXNOW_CACHE_TYPE") as raised:
        IndexNow(_app(INDEXNOW_CACHE_TYPE=value))
    if isinstance(value, str) and value:
        assert "SimpleCache" in str(raised.value)  # says what would have been right


@pytest.mark.parametrize("value", ["SimpleCache", "NullCache", "flask_caching.backends.SimpleCache"])
def test_known_cache_types_are_accepted(value: str) -> None:
    app = _app(INDEXNOW_CACHE_TYPE=value)
    with pytest.warns() if value == "NullCache" else _nothing():
        IndexNow(app)
    assert "indexnow" in app.extensions


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def test_strip_query_params_setting() -> None:
    assert load_settings({}).strip_query_params == QueryFilter(
        ("utm_*", "gclid", "fbclid", "msclkid", "mc_cid", "mc_eid", "_ga"))
    assert load_settings({"INDEXNOW_STRIP_QUERY_PARAMS": ()}).strip_query_params.find is None
    assert load_settings({"INDEXNOW_STRIP_QUERY_PARAMS": None}).strip_query_params.find is None
    assert load_settings({"INDEXNOW_STRIP_QUERY_PARAMS": "ref, src_*"}).strip_query_params == QueryFilter(
        ("ref", "src_*"))


@pytest.mark.parametrize("value", [3, {"utm_source": 1}, ["utm_source", 3], ["*"], ["a*b"], ["a=b"], ["a&b"],
                                   ["a b"], [""], ["ref\n"], ["%75tm"], ["caf\u00e9"]])
def test_bad_strip_query_params_name_the_key(value: object) -> None:
    with pytest.raises(ConfigurationError, match="INDEXNOW_STRIP_QUERY_PARAMS"):
        load_settings({"INDEXNOW_STRIP_QUERY_PARAMS": value})
