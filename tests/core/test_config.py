"""SPEC §2: every key has its default; bad values fail at init_app naming the key."""

from __future__ import annotations

import pytest
from flask import Flask
from flask_sqlalchemy import SQLAlchemy

from flask_indexnow import ConfigurationError, IndexNow
from flask_indexnow.config import DEFAULTS, load_settings


def _app(**config: object) -> Flask:
    app = Flask(__name__)
    app.config.update(SQLALCHEMY_DATABASE_URI="sqlite://", **config)
    SQLAlchemy().init_app(app)
    return app


def test_every_key_gets_its_default() -> None:
    app = _app()
    IndexNow(app)
    for key, (default, _meaning) in DEFAULTS.items():
        assert app.config[key] == default, key
    settings = app.extensions["indexnow"].settings
    assert settings.batch_size == 100
    assert settings.retry_delay == 300
    assert settings.max_attempts == 5
    assert settings.stale_after == 900
    assert settings.timeout == 10
    assert settings.tick_lock_ttl == 55
    assert settings.tick_batch_max == 25
    assert settings.status_url_prefix == "/indexnow"
    assert settings.history_retention_days == 30
    assert settings.endpoint == "https://api.indexnow.org/indexnow"
    assert settings.enabled and settings.queue_enabled and not settings.dry_run


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("INDEXNOW_BATCH_SIZE", -1),
        ("INDEXNOW_BATCH_SIZE", 0),
        ("INDEXNOW_BATCH_SIZE", 2.5),
        ("INDEXNOW_BATCH_SIZE", "many"),
        ("INDEXNOW_BATCH_SIZE", True),
        ("INDEXNOW_RETRY_DELAY", -5),
        ("INDEXNOW_RETRY_DELAY", float("nan")),
        ("INDEXNOW_MAX_ATTEMPTS", 0),
        ("INDEXNOW_STALE_AFTER", 0),
        ("INDEXNOW_TIMEOUT", 0),
        ("INDEXNOW_TIMEOUT", None),
        ("INDEXNOW_TICK_LOCK_TTL", 0),
        ("INDEXNOW_TICK_BATCH_MAX", -3),
        ("INDEXNOW_HISTORY_RETENTION_DAYS", 0),
        ("INDEXNOW_RESUBMIT_INTERVAL", -1),
        ("INDEXNOW_ENABLED", "perhaps"),
        ("INDEXNOW_QUEUE_ENABLED", 2),
        ("INDEXNOW_DRY_RUN", [True]),
        ("INDEXNOW_ALLOW_PRIVATE_ENDPOINT", "maybe"),
        ("INDEXNOW_TABLE_PREFIX", "bad-prefix;"),
        ("INDEXNOW_TABLE_PREFIX", 3),
        ("INDEXNOW_STATUS_URL_PREFIX", "no-slash"),
        ("INDEXNOW_KEY_LOCATION", "ftp://example.com/key.txt"),
        ("INDEXNOW_KEYS", ["example.com"]),
        ("INDEXNOW_KEYS", {"example.com": "short"}),
        ("INDEXNOW_ALLOWED_HOSTS", 5),
    ],
)
def test_bad_values_fail_naming_the_key(key: str, value: object) -> None:
    app = _app(**{key: value})
    with pytest.raises(ConfigurationError, match=key):
        IndexNow(app)
    assert "indexnow" not in app.extensions


@pytest.mark.parametrize(
    ("key", "value", "attribute", "expected"),
    [
        ("INDEXNOW_ENABLED", "false", "enabled", False),
        ("INDEXNOW_DRY_RUN", "on", "dry_run", True),
        ("INDEXNOW_BATCH_SIZE", "250", "batch_size", 250),
        ("INDEXNOW_RETRY_DELAY", 1.5, "retry_delay", 1.5),
        ("INDEXNOW_STATUS_URL_PREFIX", "/admin/indexnow/", "status_url_prefix", "/admin/indexnow"),
        ("INDEXNOW_STATUS_URL_PREFIX", None, "status_url_prefix", None),
        ("INDEXNOW_HISTORY_RETENTION_DAYS", None, "history_retention_days", None),
        ("INDEXNOW_ALLOWED_HOSTS", "Example.com, www.example.com", "allowed_hosts",
         frozenset({"example.com", "www.example.com"})),
    ],
)
def test_values_from_the_environment_are_understood(key: str, value: object, attribute: str, expected: object) -> None:
    settings = load_settings({key: value})
    assert getattr(settings, attribute) == expected


def test_server_name_limits_hosts_by_default() -> None:
    assert load_settings({"SERVER_NAME": "www.example.com:8000"}).allowed_hosts == frozenset({"www.example.com"})
    assert load_settings({}).allowed_hosts == frozenset()  # closed: nothing configured, nothing allowed (SPEC §12)
    assert load_settings({"INDEXNOW_ALLOWED_HOSTS": "*"}).allowed_hosts is None
    explicit = load_settings({"SERVER_NAME": "a.example.com", "INDEXNOW_ALLOWED_HOSTS": ["b.example.com"]})
    assert explicit.allowed_hosts == frozenset({"b.example.com"})


@pytest.mark.parametrize("key", [None, "short", "has space in it", "x" * 129, 12345678])
def test_bad_key_or_endpoint_does_not_stop_the_app(key: object) -> None:
    app = _app(INDEXNOW_KEY=key, INDEXNOW_ENDPOINT="not a url")
    IndexNow(app)
    assert "indexnow" in app.extensions


def test_init_app_twice_is_refused() -> None:
    app = _app()
    ext = IndexNow(app)
    with pytest.raises(RuntimeError, match="already registered"):
        ext.init_app(app)


def test_init_app_without_db_is_refused() -> None:
    app = Flask(__name__)
    with pytest.raises(RuntimeError, match="Flask-SQLAlchemy"):
        IndexNow(app)


def test_db_is_found_in_app_extensions() -> None:
    app = _app()
    IndexNow(app)
    assert app.extensions["indexnow"].db is app.extensions["sqlalchemy"]


def test_one_extension_many_apps() -> None:
    db = SQLAlchemy()
    ext = IndexNow(db=db)
    apps = []
    for prefix in ("one_", "two_", "one_"):
        app = Flask(__name__)
        app.config.update(SQLALCHEMY_DATABASE_URI="sqlite://", INDEXNOW_TABLE_PREFIX=prefix)
        db.init_app(app)
        ext.init_app(app)
        apps.append(app)
    states = [a.extensions["indexnow"] for a in apps]
    assert states[0].models is states[2].models  # built once per (db, prefix)
    assert states[0].models.Queue.__tablename__ == "one_indexnow_queue"
    assert states[1].models.Queue.__tablename__ == "two_indexnow_queue"
    assert {t.name for t in db.metadata.sorted_tables} >= {
        "one_indexnow_queue", "one_indexnow_history", "one_indexnow_schedules", "one_indexnow_jobs",
        "one_indexnow_urls", "two_indexnow_queue",
    }


def test_cache_must_be_initialised_on_the_app() -> None:
    from flask_caching import Cache

    app = _app()
    with pytest.raises(RuntimeError, match="cache.init_app"):
        IndexNow(app, cache=Cache())


def test_nullcache_is_warned_about() -> None:
    from flask_indexnow import IndexNowWarning

    app = _app(INDEXNOW_CACHE_TYPE="NullCache")
    with pytest.warns(UserWarning) as caught:
        IndexNow(app)
    assert any(w.category is IndexNowWarning and "tick lock" in str(w.message) for w in caught)


def test_runtime_error_outside_app_context() -> None:
    ext = IndexNow()
    with pytest.raises(RuntimeError, match="application context"):
        ext.process_queue()
    app = _app()
    with app.app_context(), pytest.raises(RuntimeError, match="init_app"):
        ext.process_queue()
