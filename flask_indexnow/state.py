"""Per-app state, kept in ``app.extensions["indexnow"]``: the app's own objects and each module's part."""

from __future__ import annotations

import hashlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from flask import Flask, current_app, has_app_context

from .breaker import CacheBreaker, GuardedCache
from .config import Settings
from .machinelock import MachineLock
from .models import Models
from .outbound import OutboundSession
from .ratelog import RateLimitedLog
from .ticker import Ticker

logger = logging.getLogger(__name__)

#: How many URLs ``resource_before_delete`` remembers until ``resource_deleted`` comes.
REMEMBERED_MAX = 10_000


class Registrations(Protocol):
    """What the state reads of the ``IndexNow`` object: what the site registered on it.

    ``extension.py`` sits at the top of the layers and imports this module; this
    protocol is the part of it the layers below may see (``IndexNow`` has it all).
    """

    @property
    def adapters(self) -> Mapping[type, Any]: ...  # model → watching.events.Adapter

    @property
    def job_handlers(self) -> Mapping[str, Callable[[Any], Any]]: ...

    @property
    def declared_schedules(self) -> Mapping[str, Any]: ...  # name → scheduling.ScheduleSpec

    @property
    def status_auth_callback(self) -> Callable[[], bool] | None: ...

    @property
    def status_form_fields_callback(self) -> Callable[[], Mapping[str, str] | None] | None: ...


@dataclass(eq=False)
class Engine:
    """One configured engine (an INDEXNOW_ENDPOINT(S) URL) and what this process remembers of it.

    Made once per endpoint and kept by the state (``state.engines``, through
    :func:`flask_indexnow.engines.engine`), so its memory lasts from pass to
    pass; delivery, the status document and the metrics take it as an argument.
    What every process shares about an engine (its pause, its budget count,
    its 403 streaks) is in the cache under keys made from :attr:`digest`; this
    object holds the process's own copy for when the cache cannot answer.
    Everything else (the settings, the database, the cache, the logs) is the
    app's, shared by every engine, and stays on the state.
    """

    #: The endpoint URL the engine's POSTs go to.
    endpoint: str
    #: This process's own knowledge of the engine's pause (until, HTTP status), so
    #: the pause holds even while the cache is down (see delivery.worker.pause_endpoint).
    paused: tuple[float, int] | None = None
    #: This process's own count of POSTs per budget window (cache key → (window, count)),
    #: used while the cache cannot count (see delivery/budget.py).
    local_request_counts: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def digest(self) -> str:
        """A short, fixed-width name for the endpoint in cache keys (its pause, budget and 403 streaks)."""
        return hashlib.sha256(self.endpoint.encode("utf-8")).hexdigest()[:16]


@dataclass
class TickMemory:
    """The after-response tick's memory in this process; written by tick.py only."""

    #: Held while this process runs a tick: one tick per process at a time, so a
    #: burst of requests never piles up threads (and cache connections) behind it.
    guard: threading.Lock = field(default_factory=threading.Lock)
    #: While the cache is down: the time.monotonic() instant before which this process
    #: does not tick without the lock (None: the cache worked at the last tick).
    lockless_after: float | None = None
    #: Taken by a tick so that the processes of one machine take turns even without a shared
    #: cache (see machinelock.py); made when the first tick runs.
    machine_lock: MachineLock | None = None


@dataclass
class DueMemory:
    """This process's memory of the next-due time; written by due.py only."""

    #: This process's own copy of "nothing is due before" (a timestamp), so an
    #: idle site's requests skip the tick without even a cache read.
    idle_until: float = 0.0
    #: The earliest due time (a timestamp) of rows written during requests of this
    #: process and not yet published to the cache: publishing waits until after the
    #: response, so no visitor waits for the cache.
    pending: float | None = None


@dataclass
class PassMemory:
    """What the passes of this process remember between passes; written by delivery/worker.py only."""

    #: Before this timestamp no claimed row can be stale: passes skip the stale sweep.
    next_sweep_at: float = 0.0
    #: When a pass of this process last refreshed the cached next-due time.
    due_refreshed_at: float = 0.0


@dataclass
class SchedulerMemory:
    """The scheduler's memory in this process; written by scheduling/builtins.py only."""

    #: When this process last made sure the built-in schedules exist (a time.monotonic()
    #: instant; None: look at the table next time).
    builtins_checked_at: float | None = None


@dataclass
class InboxMemory:
    """The inbox's memory in this process; written by inbox.py only."""

    #: Whether the inbox has taken a write from this process: on PostgreSQL later writes in the
    #: site's transaction need no savepoint (see inbox.write_in_transaction).
    proven: bool = False


@dataclass
class WatchMemory:
    """The URLs of resources being deleted, between ``resource_before_delete`` and ``resource_deleted``.

    Written by watching/events.py only; at most :data:`REMEMBERED_MAX`, the oldest forgotten first.
    """

    remembered: OrderedDict[Any, str] = field(default_factory=OrderedDict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def remember(self, key: Any, url: str) -> None:
        with self.lock:
            self.remembered[key] = url
            self.remembered.move_to_end(key)
            while len(self.remembered) > REMEMBERED_MAX:
                self.remembered.popitem(last=False)

    def recall(self, key: Any) -> str | None:
        with self.lock:
            return self.remembered.pop(key, None)


@dataclass
class IndexNowState:
    """Everything the extension knows about one app, as a list of parts.

    The extension object itself holds only what is shared by every app it is
    registered on (watched models, job handlers); this holds the rest. Each
    module's own memory is a part of its own, written by that module only
    (the part's class says which): a line that writes ``state.due`` is in
    due.py, one that writes ``state.tick`` in tick.py.
    """

    # -- what the app gave: the registrations, the database, the cache, the settings
    extension: Registrations
    db: Any
    cache: Any
    models: Models
    settings: Settings
    #: Guards the parts made on first use (the HTTP session, the engines).
    lock: threading.Lock = field(default_factory=threading.Lock)

    # -- the parts, each written by the module its class names
    #: Each engine by its endpoint URL, made on first use and kept (engines.py).
    engines: dict[str, Engine] = field(default_factory=dict)
    #: The after-response tick (tick.py).
    tick: TickMemory = field(default_factory=TickMemory)
    #: The next-due time this process knows and has yet to publish (due.py).
    due: DueMemory = field(default_factory=DueMemory)
    #: What passes remember between passes (delivery/worker.py).
    worker: PassMemory = field(default_factory=PassMemory)
    #: The scheduler's memory (scheduling/builtins.py).
    scheduler: SchedulerMemory = field(default_factory=SchedulerMemory)
    #: The inbox's memory (inbox.py).
    inbox: InboxMemory = field(default_factory=InboxMemory)
    #: URLs of resources being deleted (watching/events.py).
    watching: WatchMemory = field(default_factory=WatchMemory)

    # -- services made once per app
    #: Runs the after-response tick in the background; None: in the close callback (see ticker.py).
    ticker: Ticker | None = None
    #: The app's outbound HTTP session, made on first use (see outbound.app_session).
    http: OutboundSession | None = None
    #: This process's robots.txt of each host, for INDEXNOW_VERIFY (a verify.robots.RobotsCache, made on first use).
    robots_cache: Any = None
    #: Failure lines, each kind at most once a minute (see ratelog.py).
    quiet_log: RateLimitedLog = field(default_factory=RateLimitedLog)
    #: After a cache failure, no cache call for a while (see breaker.py).
    cache_breaker: CacheBreaker = field(init=False)
    #: The cache through the breaker: what the extension's own cache calls use.
    guarded_cache: GuardedCache = field(init=False)

    def __post_init__(self) -> None:
        self.cache_breaker = CacheBreaker(self.quiet_log)
        self.guarded_cache = GuardedCache(self.cache, self.cache_breaker)

    @property
    def prefix(self) -> str:
        return self.settings.table_prefix

    def cache_key(self, name: str) -> str:
        """A cache key namespaced by table prefix, so two sites can share one Redis."""
        return f"{self.prefix}{name}"

    def engine(self) -> Any:
        return self.db.engine


def get_state(app: Flask | None = None) -> IndexNowState:
    """The state of ``app`` (default: the current app), with a clear error when missing."""
    if app is None:
        if not has_app_context():
            raise RuntimeError(
                "Flask-IndexNow needs an application context: use `with app.app_context():`."
            )
        app = current_app_object()
    state = app.extensions.get("indexnow") if app is not None else None
    if state is None:
        raise RuntimeError(
            "Flask-IndexNow is not registered on this app: call indexnow.init_app(app, db=db)."
        )
    return state  # type: ignore[no-any-return]


def current_app_object() -> Flask:
    """The real app behind ``current_app`` (the sender of signals, an identity to compare)."""
    app: Flask = current_app._get_current_object()  # type: ignore[attr-defined]
    return app
