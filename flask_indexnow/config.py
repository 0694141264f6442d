"""Every ``INDEXNOW_*`` setting: its default, its meaning and its check.

All key names live here, documented once. :func:`load_settings` applies the
defaults with ``app.config.setdefault``, validates each value and returns a
typed, read-only :class:`Settings` snapshot that the rest of the extension uses.
A bad value fails at ``init_app`` with a :class:`ConfigurationError` naming the
key; only the key and the endpoint are checked softly, because a site must keep
queueing while its owner fixes them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlsplit

from werkzeug.utils import import_string

from .errors import ConfigurationError, InvalidURLError
from .urls import ANY_HOST, QueryFilter, check_host

_KEY_RE = re.compile(r"[A-Za-z0-9-]{8,128}")


def key_problem(key: Any) -> str | None:
    """Why ``key`` cannot be used as an IndexNow key, or None when it can (INDEXNOW_KEY, and every other key)."""
    if key is None or key == "":
        return "INDEXNOW_KEY is not set (run `flask indexnow key generate`)"
    if not isinstance(key, str) or not _KEY_RE.fullmatch(key):
        return "INDEXNOW_KEY must be 8-128 characters of a-z, A-Z, 0-9 and '-'"
    return None

DEFAULT_ENDPOINT = "https://api.indexnow.org/indexnow"

#: key → (default, meaning). The docs' configuration reference is generated from this mapping.
DEFAULTS: dict[str, tuple[Any, str]] = {
    "INDEXNOW_ENABLED": (True, "master switch; False: events are ignored, nothing is sent"),
    "INDEXNOW_KEY": (None, "the IndexNow key: 8-128 characters of a-z A-Z 0-9 -"),
    "INDEXNOW_KEY_LOCATION": (None, "URL of the key file, may hold {host} and {key}; None: https://{host}/{key}.txt, served by the extension"),
    "INDEXNOW_KEYS": ({}, "mapping host -> key for several sites in one app; overrides INDEXNOW_KEY for those hosts"),
    "INDEXNOW_PREVIOUS_KEYS": ((), "keys rotated out (a list, or one string separated by commas): their key files are still served, for an engine still checking an old submission; never submitted (`flask indexnow key rotate`)"),
    "INDEXNOW_ENDPOINT": (DEFAULT_ENDPOINT, "where batches are POSTed"),
    "INDEXNOW_ENDPOINTS": (None, "several engines: a list of endpoint URLs (or a comma/space separated string), each sent every batch with its own retries, pause and budget; replaces INDEXNOW_ENDPOINT"),
    "INDEXNOW_REQUESTS_PER_MINUTE": (None, "most POSTs each engine gets per minute, shared by every process through the cache; None: no budget (at most 10000)"),
    "INDEXNOW_ALLOW_PRIVATE_ENDPOINT": (False, "lets the endpoint be http:// or a loopback/private host (tests, local sandboxes)"),
    "INDEXNOW_BASE_URL": (None, "the site's canonical origin, e.g. https://www.example.org: url=/related= functions run in a request context for it, so url_for(_external=True) is canonical in and out of requests"),
    "INDEXNOW_ALLOWED_HOSTS": (None, "hosts whose URLs may be queued (a list, or one string separated by commas); "
                                     "None: the hosts of INDEXNOW_BASE_URL, SERVER_NAME and INDEXNOW_KEYS, and with "
                                     "none of those every URL is refused; '*': any public host"),
    "INDEXNOW_QUEUE_ENABLED": (True, "the after-request tick; False: delivery only by the worker, scheduler or status page"),
    "INDEXNOW_BATCH_SIZE": (100, "rows one worker pass claims (at most 10000)"),
    "INDEXNOW_RETRY_DELAY": (300, "seconds before a temporary failure is retried (at most 2592000: 30 days)"),
    "INDEXNOW_MAX_ATTEMPTS": (5, "attempts before a row is failed (at most 100)"),
    "INDEXNOW_STALE_AFTER": (900, "seconds after which a processing row is taken back to pending (at most 86400: 1 day)"),
    "INDEXNOW_TIMEOUT": (10, "HTTP timeout, seconds; must be less than INDEXNOW_STALE_AFTER (at most 300)"),
    "INDEXNOW_TABLE_PREFIX": ("", "prefix for every table of the extension"),
    "INDEXNOW_TICK_LOCK_TTL": (55, "seconds the tick lock lives at most (at most 3600); with the cache down, each process ticks at most once this often"),
    "INDEXNOW_TICK_BATCH_MAX": (25, "most rows one tick takes, whatever INDEXNOW_BATCH_SIZE says (at most 10000)"),
    "INDEXNOW_TICK_BUDGET": (5, "seconds one tick may take at most, whatever the endpoint does; unsent rows go back to pending (at most 300)"),
    "INDEXNOW_TICK_MODE": ("auto", "where the after-response tick runs: 'thread' (a background thread per process, "
                                   "a greenlet under gevent; responses only wake it), 'after-response' (in the "
                                   "response's close callback, in the request's worker), 'auto' (thread, unless the "
                                   "server runs no threads: uWSGI without --enable-threads)"),
    "INDEXNOW_TICK_DELAY": (2.0, "seconds the background tick waits after a response wakes it, so that the responses of "
                                 "a burst are one tick (0: at once; at most 60)"),
    "INDEXNOW_STATUS_URL_PREFIX": ("/indexnow", "where the status blueprint is mounted; None: no status page"),
    "INDEXNOW_HISTORY_RETENTION_DAYS": (30, "history older than this is pruned by a built-in schedule (at most 3650: 10 years)"),
    "INDEXNOW_DRY_RUN": (False, "run the whole pipeline but POST nothing; history rows say dry_run"),
    "INDEXNOW_RESUBMIT_INTERVAL": (0, "seconds: an update for a URL delivered less than this long ago waits (at most 31536000: 365 days)"),
    "INDEXNOW_SCHEDULER_ENABLED": (True, "the tick keeps the built-in schedules in place (backup cron)"),
    "INDEXNOW_JOB_MAX_ATTEMPTS": (3, "attempts a scheduled job gets before it is failed (at most 100)"),
    "INDEXNOW_JOB_RETRY_DELAY": (60, "seconds before a failed job is retried (doubled on each attempt; at most 86400: 1 day)"),
    "INDEXNOW_FORBIDDEN_ESCALATION": (3, "consecutive HTTP 403 answers for one host before one CRITICAL log line per streak; 0: never (at most 1000)"),
    "INDEXNOW_METRICS_TOKEN": (None, "bearer token that lets a scraper read {prefix}/metrics (Authorization: Bearer ...); at least 16 characters; None: only the status page's users (@indexnow.status_auth)"),
    "INDEXNOW_STRIP_QUERY_PARAMS": (("utm_*", "gclid", "fbclid", "msclkid", "mc_cid", "mc_eid", "_ga"),
                                    "query parameters dropped from every URL before dedup and sending (names, or a "
                                    "name's start followed by '*'); () keeps every parameter"),
    "INDEXNOW_VERIFY": (None, "before an update is sent, ask for the page and send only what engines would index: "
                              "None (no check), 'app' (the app itself, in-process) or 'http' (a real GET); see Only indexable pages"),
    "INDEXNOW_CACHE_TYPE": ("SimpleCache", "cache made by the extension when init_app gets none; other INDEXNOW_CACHE_* keys are passed on as CACHE_*"),
}

# -- serving the sitemap (issue 23; see sitemap/serve.py) --
#: The sitemaps.org limit of URLs in one sitemap file, and the largest INDEXNOW_SITEMAP_MAX_URLS.
SITEMAP_MAX_URLS = 50_000
DEFAULTS.update({
    "INDEXNOW_SITEMAP_URL": (None, "path of the sitemap the extension serves from the watched models, e.g. '/sitemap.xml' (parts of a larger one at /sitemap-N.xml); None: no sitemap route, and no change times recorded"),
    "INDEXNOW_SITEMAP_MAX_URLS": (SITEMAP_MAX_URLS, "URLs per sitemap file (at most 50000); more, or more than 50 MB, and the sitemap URL answers a sitemap index over parts"),
    "INDEXNOW_SITEMAP_CACHE_SECONDS": (300, "seconds a built sitemap is kept in the extension's cache, shared by every process (0: built on every request; at most 86400)"),
})

#: The longest INDEXNOW_TICK_BUDGET: a tick runs in a web worker, after its response.
MAX_TICK_BUDGET = 300
#: The most engines INDEXNOW_ENDPOINTS may list: each one multiplies the queue rows and the POSTs.
MAX_ENDPOINTS = 8
#: The longest endpoint URL INDEXNOW_ENDPOINTS takes: it is the queue rows' ``engine`` key (255 characters).
MAX_ENDPOINT_LENGTH = 255
#: The largest INDEXNOW_REQUESTS_PER_MINUTE: above it the budget would never hold anything back.
MAX_REQUESTS_PER_MINUTE = 10_000

#: key → (largest value, in words). Every numeric setting has one: a value
#: beyond it is a typo or a unit mistake, and far beyond it (``1e300``) it
#: would overflow date arithmetic on every pass instead of failing here.
MAXIMA: dict[str, tuple[float, str]] = {
    "INDEXNOW_BATCH_SIZE": (10_000, "10000"),
    "INDEXNOW_RETRY_DELAY": (30 * 86_400, "2592000 seconds: 30 days"),
    "INDEXNOW_MAX_ATTEMPTS": (100, "100"),
    "INDEXNOW_STALE_AFTER": (86_400, "86400 seconds: 1 day"),
    "INDEXNOW_TIMEOUT": (300, "300 seconds"),
    "INDEXNOW_TICK_LOCK_TTL": (3_600, "3600 seconds"),
    "INDEXNOW_TICK_BATCH_MAX": (10_000, "10000"),
    "INDEXNOW_TICK_BUDGET": (MAX_TICK_BUDGET, "300 seconds"),
    "INDEXNOW_TICK_DELAY": (60, "60 seconds"),
    "INDEXNOW_HISTORY_RETENTION_DAYS": (3_650, "3650 days: 10 years"),
    "INDEXNOW_RESUBMIT_INTERVAL": (365 * 86_400, "31536000 seconds: 365 days"),
    "INDEXNOW_JOB_MAX_ATTEMPTS": (100, "100"),
    "INDEXNOW_JOB_RETRY_DELAY": (86_400, "86400 seconds: 1 day"),
    "INDEXNOW_FORBIDDEN_ESCALATION": (1_000, "1000"),
    "INDEXNOW_SITEMAP_MAX_URLS": (SITEMAP_MAX_URLS, "50000"),
    "INDEXNOW_SITEMAP_CACHE_SECONDS": (86_400, "86400 seconds: 1 day"),
}

_PREFIX_RE = re.compile(r"[A-Za-z0-9_]{0,40}")
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


@dataclass(frozen=True)
class Settings:
    """The validated settings of one app, read once at ``init_app``."""

    enabled: bool
    key: str | None
    key_location: str | None
    keys: Mapping[str, str]
    endpoint: str
    allow_private_endpoint: bool
    allowed_hosts: frozenset[str] | None
    queue_enabled: bool
    batch_size: int
    retry_delay: float
    max_attempts: int
    stale_after: float
    timeout: float
    table_prefix: str
    tick_lock_ttl: int
    tick_batch_max: int
    tick_budget: float
    status_url_prefix: str | None
    history_retention_days: int | None
    dry_run: bool
    resubmit_interval: float
    scheduler_enabled: bool
    job_max_attempts: int
    job_retry_delay: float
    forbidden_escalation: int
    base_url: str | None = None
    #: INDEXNOW_ENDPOINTS as given (empty: one engine, INDEXNOW_ENDPOINT; then ``endpoint`` is the first).
    endpoints: tuple[str, ...] = ()
    requests_per_minute: int | None = None
    cache_config: Mapping[str, Any] = field(default_factory=dict)
    metrics_token: str | None = field(default=None, repr=False)
    #: INDEXNOW_STRIP_QUERY_PARAMS, ready to apply.
    strip_query_params: QueryFilter = field(default_factory=lambda: QueryFilter(DEFAULTS["INDEXNOW_STRIP_QUERY_PARAMS"][0]))
    #: INDEXNOW_VERIFY: None, "app" or "http".
    verify: str | None = None
    #: INDEXNOW_TICK_MODE: "auto", "thread" or "after-response" (see ticker.py).
    tick_mode: str = "auto"
    #: INDEXNOW_TICK_DELAY: how long the ticker gathers wakes before it ticks (see ticker.py).
    tick_delay: float = 2.0
    #: INDEXNOW_SITEMAP_URL, _MAX_URLS and _CACHE_SECONDS (the served sitemap).
    sitemap_url: str | None = None
    sitemap_max_urls: int = SITEMAP_MAX_URLS
    sitemap_cache_seconds: int = 300
    # Key rotation, and the dry run that app.testing / app.debug imply.
    #: INDEXNOW_PREVIOUS_KEYS: served, never submitted.
    previous_keys: tuple[str, ...] = ()
    #: Why the dry run is on when no setting asked for it ("app.testing is True" …); None: as configured.
    implied_dry_run: str | None = None


_SITEMAP_PATH_RE = re.compile(r"/[A-Za-z0-9._~/-]*[A-Za-z0-9_~-]\.xml")


def _sitemap(config: Mapping[str, Any]) -> dict[str, Any]:
    """The sitemap settings; the path must end in ``.xml`` so its parts can be ``-N.xml`` beside it."""
    url = _optional_str("INDEXNOW_SITEMAP_URL", config["INDEXNOW_SITEMAP_URL"])
    if url is not None and not _SITEMAP_PATH_RE.fullmatch(url):
        raise ConfigurationError(
            f"INDEXNOW_SITEMAP_URL must be a path such as '/sitemap.xml' (starting with '/', ending in '.xml', "
            f"letters, digits and . _ ~ - / only), got {url!r}")
    return {
        "sitemap_url": url,
        "sitemap_max_urls": _number("INDEXNOW_SITEMAP_MAX_URLS", config["INDEXNOW_SITEMAP_MAX_URLS"], minimum=1,
                                    integer=True),
        "sitemap_cache_seconds": _number("INDEXNOW_SITEMAP_CACHE_SECONDS", config["INDEXNOW_SITEMAP_CACHE_SECONDS"],
                                         minimum=0, integer=True),
    }


def _bool(key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise ConfigurationError(f"{key} must be True or False, got {value!r}")


def _number(key: str, value: Any, *, minimum: float, integer: bool, exclusive: bool = False) -> Any:
    if isinstance(value, str):
        try:
            value = int(value) if integer else float(value)
        except ValueError:
            raise ConfigurationError(f"{key} must be a number, got {value!r}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigurationError(f"{key} must be a number, got {value!r}")
    if value != value or value in (float("inf"), float("-inf")):
        raise ConfigurationError(f"{key} must be a finite number, got {value!r}")
    if integer and isinstance(value, float) and not value.is_integer():
        raise ConfigurationError(f"{key} must be a whole number, got {value!r}")
    if value < minimum or (exclusive and value == minimum):
        relation = "greater than" if exclusive else "at least"
        raise ConfigurationError(f"{key} must be {relation} {minimum:g}, got {value!r}")
    if key in MAXIMA and value > MAXIMA[key][0]:
        raise ConfigurationError(f"{key} must be at most {MAXIMA[key][1]}, got {value!r}")
    return int(value) if integer else float(value)


def _optional_str(key: str, value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ConfigurationError(f"{key} must be a string or None, got {value!r}")
    return value.strip() or None


def _key(value: Any) -> str | None:
    """The key as text: environment loaders turn an all-digit key into an int."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str) and value != value.strip():
        # A key read from a secrets file keeps its newline: it would be served at
        # "/…\n.txt" and every engine would refuse it. Certainly a mistake: refused here.
        raise ConfigurationError(
            "INDEXNOW_KEY has white space around it (a newline read from a file?): strip it")
    if value is None or isinstance(value, str):
        return value
    return repr(value)  # kept, so the status page says it is invalid rather than missing


def _host(key: str, value: Any) -> str:
    """One host of INDEXNOW_ALLOWED_HOSTS or INDEXNOW_KEYS, in the form URLs are stored with.

    Only what a URL can carry is accepted: a mistyped entry (a scheme, a path,
    a port, a space, a wildcard) or one no URL may ever use (``localhost``, a
    private address) would silently match nothing, so it fails ``init_app``.
    """
    if not isinstance(value, str) or not value.strip():
        raise ConfigurationError(f"{key} holds {value!r}, which is not a host name")
    host = value.strip()
    hint = None
    if "://" in host:
        hint = "write the host alone, without the scheme"
    elif "/" in host:
        hint = "write the host alone, without a path"
    elif "*" in host:
        hint = "wildcards are not supported: list each host (or INDEXNOW_ALLOWED_HOSTS = '*' for any public host)"
    elif host.count(":") == 1 and not host.startswith("["):
        hint = "write the host alone, without a port"
    if hint is None:
        try:
            return check_host(host)
        except InvalidURLError as exc:
            hint = str(exc)
    raise ConfigurationError(f"{key}: {value!r} is not a host whose URLs can be submitted ({hint})")


def _allowed_hosts(value: Any) -> frozenset[str] | None:
    """INDEXNOW_ALLOWED_HOSTS as canonical hosts; None for '*' (any public host)."""
    key = "INDEXNOW_ALLOWED_HOSTS"
    if isinstance(value, str):
        value = [part for part in re.split(r"[\s,]+", value) if part]
    if isinstance(value, Mapping) or not isinstance(value, (list, tuple, set, frozenset)):
        raise ConfigurationError(f"{key} must be a list of host names, '*' or None, got {value!r}")
    if ANY_HOST in value:
        return None
    return frozenset(_host(key, h) for h in value)


def _keys(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping):
        raise ConfigurationError(f"INDEXNOW_KEYS must be a mapping of host to key, got {value!r}")
    keys: dict[str, str] = {}
    for host, key in value.items():
        problem = key_problem(key)
        if not isinstance(host, str) or not host.strip():
            raise ConfigurationError(f"INDEXNOW_KEYS has a host that is not a name: {host!r}")
        if problem:
            raise ConfigurationError(f"INDEXNOW_KEYS[{host!r}]: " + problem.replace("INDEXNOW_KEY ", "the key ", 1))
        keys[_host("INDEXNOW_KEYS", host)] = key
    return keys


def _base_url(value: Any) -> str | None:
    """INDEXNOW_BASE_URL as ``scheme://host[:port]``: an origin, nothing more."""
    text = _optional_str("INDEXNOW_BASE_URL", value)
    if text is None:
        return None
    example = "such as https://www.example.org"
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 (raises on a bad port)
    except ValueError:
        raise ConfigurationError(f"INDEXNOW_BASE_URL must be an absolute http(s) URL {example}, got {text!r}") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ConfigurationError(f"INDEXNOW_BASE_URL must be an absolute http(s) URL {example}, got {text!r}")
    if "@" in parts.netloc:
        raise ConfigurationError("INDEXNOW_BASE_URL must not carry a user name or password")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ConfigurationError(f"INDEXNOW_BASE_URL must be an origin without a path, query or fragment {example}, got {text!r}")
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}"


def _netloc_host(netloc: str) -> str | None:
    """The public host of a ``host[:port]`` text (SERVER_NAME, a base URL), or None.

    None for anything no URL may use (``localhost:5000`` in development):
    such a host adds nothing to the allow-list rather than failing the app.
    """
    host = netloc[: netloc.find("]") + 1] if netloc.startswith("[") else netloc.split(":", 1)[0]
    try:
        return check_host(host)
    except InvalidURLError:
        return None


def derived_hosts(config: Mapping[str, Any], base_url: str | None, keys: Mapping[str, str]) -> frozenset[str]:
    """The allow-list when INDEXNOW_ALLOWED_HOSTS is not set.

    The hosts the app says it is: INDEXNOW_BASE_URL's, SERVER_NAME's and those
    of INDEXNOW_KEYS. Empty when none is set: then every URL is refused.
    """
    hosts = set(keys)
    for netloc in (urlsplit(base_url).netloc if base_url else None, config.get("SERVER_NAME")):
        if isinstance(netloc, str) and netloc:
            host = _netloc_host(netloc)
            if host is not None:
                hosts.add(host)
    return frozenset(hosts)


def load_settings(config: dict[str, Any]) -> Settings:
    """Fill in defaults, validate every key and return the app's :class:`Settings`."""
    implied_dry_run = _implied_dry_run(config)  # before setdefault: what the app gave explicitly
    for name, (default, _meaning) in DEFAULTS.items():
        config.setdefault(name, dict(default) if isinstance(default, dict) else default)

    def num(name: str, minimum: float, integer: bool = True, exclusive: bool = False) -> Any:
        return _number(name, config[name], minimum=minimum, integer=integer, exclusive=exclusive)

    prefix = config["INDEXNOW_TABLE_PREFIX"] or ""
    if not isinstance(prefix, str) or not _PREFIX_RE.fullmatch(prefix):
        raise ConfigurationError(
            f"INDEXNOW_TABLE_PREFIX must be up to 40 characters of letters, digits and '_', got {prefix!r}"
        )
    status_prefix = _optional_str("INDEXNOW_STATUS_URL_PREFIX", config["INDEXNOW_STATUS_URL_PREFIX"])
    if status_prefix is not None:
        if not status_prefix.startswith("/"):
            raise ConfigurationError(f"INDEXNOW_STATUS_URL_PREFIX must start with '/', got {status_prefix!r}")
        status_prefix = status_prefix.rstrip("/") or "/"
    retention = config["INDEXNOW_HISTORY_RETENTION_DAYS"]
    key_location = _optional_str("INDEXNOW_KEY_LOCATION", config["INDEXNOW_KEY_LOCATION"])
    if key_location is not None and not key_location.startswith(("http://", "https://")):
        raise ConfigurationError(f"INDEXNOW_KEY_LOCATION must be an absolute http(s) URL, got {key_location!r}")
    endpoint = config["INDEXNOW_ENDPOINT"]
    endpoints = _endpoints(config["INDEXNOW_ENDPOINTS"])
    if endpoints:
        endpoint = endpoints[0]
    per_minute = config["INDEXNOW_REQUESTS_PER_MINUTE"]
    if per_minute is not None:  # (not in MAXIMA: that table holds the settings with a numeric default)
        per_minute = _number("INDEXNOW_REQUESTS_PER_MINUTE", per_minute, minimum=1, integer=True)
        if per_minute > MAX_REQUESTS_PER_MINUTE:
            raise ConfigurationError(
                f"INDEXNOW_REQUESTS_PER_MINUTE must be at most {MAX_REQUESTS_PER_MINUTE}, got {per_minute}")
    keys = _keys(config["INDEXNOW_KEYS"] or {})
    base_url = _base_url(config["INDEXNOW_BASE_URL"])
    allowed_setting = config["INDEXNOW_ALLOWED_HOSTS"]
    if allowed_setting is None or (isinstance(allowed_setting, str) and not allowed_setting.strip()):
        allowed: frozenset[str] | None = derived_hosts(config, base_url, keys)
    else:
        allowed = _allowed_hosts(allowed_setting)
    cache_config = {
        "CACHE_" + name[len("INDEXNOW_CACHE_"):]: value
        for name, value in config.items()
        if name.startswith("INDEXNOW_CACHE_")
    }
    _check_cache_type(cache_config["CACHE_TYPE"])
    settings = Settings(
        enabled=_bool("INDEXNOW_ENABLED", config["INDEXNOW_ENABLED"]),
        key=_key(config["INDEXNOW_KEY"]),
        key_location=key_location,
        keys=keys,
        endpoint=endpoint if isinstance(endpoint, str) else "",
        allow_private_endpoint=_bool("INDEXNOW_ALLOW_PRIVATE_ENDPOINT", config["INDEXNOW_ALLOW_PRIVATE_ENDPOINT"]),
        allowed_hosts=allowed,
        queue_enabled=_bool("INDEXNOW_QUEUE_ENABLED", config["INDEXNOW_QUEUE_ENABLED"]),
        batch_size=num("INDEXNOW_BATCH_SIZE", 1),
        retry_delay=num("INDEXNOW_RETRY_DELAY", 0, integer=False),
        max_attempts=num("INDEXNOW_MAX_ATTEMPTS", 1),
        stale_after=num("INDEXNOW_STALE_AFTER", 0, integer=False, exclusive=True),
        timeout=num("INDEXNOW_TIMEOUT", 0, integer=False, exclusive=True),
        table_prefix=prefix,
        tick_lock_ttl=num("INDEXNOW_TICK_LOCK_TTL", 1),
        tick_batch_max=num("INDEXNOW_TICK_BATCH_MAX", 1),
        tick_budget=_tick_budget(num("INDEXNOW_TICK_BUDGET", 0, integer=False, exclusive=True)),
        status_url_prefix=status_prefix,
        history_retention_days=None if retention is None else _number(
            "INDEXNOW_HISTORY_RETENTION_DAYS", retention, minimum=1, integer=True
        ),
        dry_run=_bool("INDEXNOW_DRY_RUN", config["INDEXNOW_DRY_RUN"]),
        resubmit_interval=num("INDEXNOW_RESUBMIT_INTERVAL", 0, integer=False),
        scheduler_enabled=_bool("INDEXNOW_SCHEDULER_ENABLED", config["INDEXNOW_SCHEDULER_ENABLED"]),
        job_max_attempts=num("INDEXNOW_JOB_MAX_ATTEMPTS", 1),
        job_retry_delay=num("INDEXNOW_JOB_RETRY_DELAY", 0, integer=False),
        forbidden_escalation=num("INDEXNOW_FORBIDDEN_ESCALATION", 0),
        base_url=base_url,
        endpoints=endpoints,
        requests_per_minute=per_minute,
        cache_config=cache_config,
        metrics_token=_metrics_token(config["INDEXNOW_METRICS_TOKEN"]),
        strip_query_params=_strip_query_params(config["INDEXNOW_STRIP_QUERY_PARAMS"]),
        verify=_verify(config["INDEXNOW_VERIFY"]),
        tick_mode=_tick_mode(config["INDEXNOW_TICK_MODE"]),
        tick_delay=num("INDEXNOW_TICK_DELAY", 0, integer=False),
        **_sitemap(config),
        previous_keys=_previous_keys(config["INDEXNOW_PREVIOUS_KEYS"], config["INDEXNOW_KEY"]),
        implied_dry_run=implied_dry_run,
    )
    if implied_dry_run:
        settings = replace(settings, dry_run=True)
    _check_timeout(settings)
    return settings


#: The shortest INDEXNOW_METRICS_TOKEN: a token is a password a scraper sends.
MIN_METRICS_TOKEN = 16
_TOKEN_RE = re.compile(r"[\x21-\x7e]+")


def _metrics_token(value: Any) -> str | None:
    """INDEXNOW_METRICS_TOKEN: None, or printable ASCII without spaces (it travels in a header), 16 characters at least."""
    if value is None:
        return None
    if not isinstance(value, str) or not _TOKEN_RE.fullmatch(value) or len(value) < MIN_METRICS_TOKEN:
        shown = f"a {type(value).__name__}" if not isinstance(value, str) else f"{len(value)} characters"
        raise ConfigurationError(
            f"INDEXNOW_METRICS_TOKEN must be None or at least {MIN_METRICS_TOKEN} printable ASCII characters "
            f"without spaces (e.g. from `python -c 'import secrets; print(secrets.token_urlsafe())'`), got {shown}")
    return value
def _verify(value: Any) -> str | None:
    """INDEXNOW_VERIFY: None, "app" or "http" (any case; surrounding blanks ignored)."""
    if value is None or value is False:
        return None
    if isinstance(value, str) and value.strip().lower() in ("app", "http"):
        return value.strip().lower()
    raise ConfigurationError(f"INDEXNOW_VERIFY must be None, 'app' or 'http', got {value!r}")


def _implied_dry_run(config: Mapping[str, Any]) -> str | None:
    """Why an app's own tests or debug runs must not reach a real engine, or None.

    With ``TESTING`` (or ``DEBUG``) on and neither an endpoint nor INDEXNOW_DRY_RUN
    given explicitly, the default endpoint is a real engine: nothing is sent.
    Decided before the defaults are filled in, so an explicit
    ``INDEXNOW_DRY_RUN = False`` (or an endpoint) still sends.
    """
    if "INDEXNOW_DRY_RUN" in config or "INDEXNOW_ENDPOINT" in config \
            or config.get("INDEXNOW_ENDPOINTS") is not None:
        return None
    for flag, name in (("TESTING", "app.testing"), ("DEBUG", "app.debug")):
        if config.get(flag):
            return f"{name} is True"
    return None


def _previous_keys(value: Any, key: Any) -> tuple[str, ...]:
    """INDEXNOW_PREVIOUS_KEYS as distinct valid keys; a bad one fails init_app, naming it."""
    name = "INDEXNOW_PREVIOUS_KEYS"
    if value is None:
        return ()
    if isinstance(value, str):
        value = [part for part in re.split(r"[\s,]+", value) if part]
    if isinstance(value, Mapping) or not isinstance(value, (list, tuple)):
        raise ConfigurationError(f"{name} must be a list of keys, got {value!r}")
    keys: list[str] = []
    for index, item in enumerate(value):
        item = _key(item)
        problem = key_problem(item)
        if problem:
            raise ConfigurationError(f"{name}[{index}]: " + problem.replace("INDEXNOW_KEY ", "a key ", 1)
                                     .replace(" (run `flask indexnow key generate`)", ""))
        if item == _key(key):
            raise ConfigurationError(f"{name}[{index}] is INDEXNOW_KEY itself: list only the keys rotated out")
        if item not in keys:
            keys.append(item)  # type: ignore[arg-type]
    return tuple(keys)


def _endpoints(value: Any) -> tuple[str, ...]:
    """INDEXNOW_ENDPOINTS as a tuple of distinct URLs (empty when None).

    Only the shape is checked here; whether each URL may be used (https, a
    public host) is checked softly, like INDEXNOW_ENDPOINT, when sending
    (see :func:`flask_indexnow.delivery.endpoint.sending_problem`).
    """
    if value is None:
        return ()
    if isinstance(value, str):
        value = [part for part in re.split(r"[\s,]+", value) if part]
    if isinstance(value, Mapping) or not isinstance(value, (list, tuple)):
        raise ConfigurationError(f"INDEXNOW_ENDPOINTS must be a list of endpoint URLs or None, got {value!r}")
    urls: list[str] = []
    for url in value:
        if not isinstance(url, str) or not url.strip():
            raise ConfigurationError(f"INDEXNOW_ENDPOINTS holds something that is not a URL: {url!r}")
        url = url.strip()
        if len(url) > MAX_ENDPOINT_LENGTH:
            raise ConfigurationError(
                f"INDEXNOW_ENDPOINTS: an endpoint URL may have at most {MAX_ENDPOINT_LENGTH} characters: {url[:60]!r}…")
        if url in urls:
            raise ConfigurationError(f"INDEXNOW_ENDPOINTS lists {url!r} twice")
        urls.append(url)
    if not urls:
        raise ConfigurationError("INDEXNOW_ENDPOINTS is empty: list at least one endpoint URL, or set it to None")
    if len(urls) > MAX_ENDPOINTS:
        raise ConfigurationError(f"INDEXNOW_ENDPOINTS may list at most {MAX_ENDPOINTS} engines, got {len(urls)}")
    return tuple(urls)


def _strip_query_params(value: Any) -> QueryFilter:
    """INDEXNOW_STRIP_QUERY_PARAMS: a list of names (``"gclid"``) or name starts (``"utm_*"``); () or None: none."""
    key = "INDEXNOW_STRIP_QUERY_PARAMS"
    if value is None:
        return QueryFilter()
    if isinstance(value, str):
        value = [part for part in re.split(r"[\s,]+", value) if part]
    if isinstance(value, Mapping) or not isinstance(value, (list, tuple, set, frozenset)):
        raise ConfigurationError(f"{key} must be a list of query parameter names, got {value!r}")
    try:
        return QueryFilter(value)
    except ValueError as exc:
        raise ConfigurationError(f"{key}: {exc}") from None


def _check_cache_type(value: Any) -> None:
    """INDEXNOW_CACHE_TYPE must name a cache Flask-Caching can make: a backend's name or a dotted path.

    Flask-Caching itself would fail later with an AttributeError or ImportError
    that names neither the setting nor what would have been right.
    """
    key = "INDEXNOW_CACHE_TYPE"
    if not isinstance(value, str) or not value.strip():
        raise ConfigurationError(f"{key} must be the name of a Flask-Caching backend such as "
                                 f"'SimpleCache' or 'RedisCache', got {value!r}")
    path = value if "." in value else "flask_caching.backends." + value
    try:
        import_string(path)
    except ImportError:
        import flask_caching.backends
        from flask_caching.backends.base import BaseCache
        # The class names (Flask-Caching before 2.5 lists its old lower-case factory names in __all__).
        known = ", ".join(sorted(name for name, obj in vars(flask_caching.backends).items()
                                 if isinstance(obj, type) and issubclass(obj, BaseCache) and obj is not BaseCache))
        raise ConfigurationError(f"{key} {value!r} is no cache backend: use one of {known}, "
                                 "or the dotted path of a cache class") from None


def _tick_budget(value: float) -> float:
    if value > MAX_TICK_BUDGET:
        raise ConfigurationError(f"INDEXNOW_TICK_BUDGET must be at most {MAX_TICK_BUDGET} seconds, got {value:g}")
    return value


#: The values INDEXNOW_TICK_MODE takes (ticker.py acts on them).
TICK_MODES = ("auto", "thread", "after-response")


def _tick_mode(value: Any) -> str:
    mode = value.strip().lower() if isinstance(value, str) else value
    if mode not in TICK_MODES:
        raise ConfigurationError(
            f"INDEXNOW_TICK_MODE must be one of {', '.join(repr(m) for m in TICK_MODES)}, got {value!r}")
    return str(mode)


def _check_timeout(settings: Settings) -> None:
    """A POST that can outlast INDEXNOW_STALE_AFTER would have its rows taken back and sent twice."""
    if settings.timeout >= settings.stale_after:
        raise ConfigurationError(
            f"INDEXNOW_TIMEOUT ({settings.timeout:g}s) must be less than INDEXNOW_STALE_AFTER "
            f"({settings.stale_after:g}s): a request still running when its rows are taken back "
            "would have them sent twice"
        )
