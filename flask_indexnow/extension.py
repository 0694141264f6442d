"""The ``IndexNow`` extension object."""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Iterable, Mapping
from datetime import date, datetime
from typing import Any, TypeVar

from flask import Flask
from flask_caching import Cache

from . import queue, scheduling
from . import tick as tick_module
from . import verify as verification
from .cli import indexnow_group
from .config import load_settings
from .delivery import merge, worker
from .models import Models, get_models
from .state import IndexNowState, get_state
from .verify import Verdict
from .watching import bridge, events
from .watching.events import Adapter
from .web import register_web

F = TypeVar("F", bound=Callable[..., Any])

logger = logging.getLogger(__name__)


class IndexNowWarning(UserWarning):
    """A configuration that works but weakens one of the extension's promises."""


class IndexNow:
    """Tell search engines which pages changed, through a durable queue.

    ::

        indexnow = IndexNow()
        indexnow.init_app(app, db=db, cache=cache)

    What is registered on this object (watched models, job handlers, the status
    page's auth callback) is shared by every app it is initialised on; all
    per-app state lives in ``app.extensions["indexnow"]``.
    """

    def __init__(self, app: Flask | None = None, *, db: Any = None, cache: Any = None) -> None:
        self._db = db
        self._cache = cache
        self.adapters: dict[type, Adapter] = {}
        self.job_handlers: dict[str, Callable[[Any], Any]] = {}
        #: ``indexnow.schedule(...).declare()``: name → spec, written by ``scheduler.sync()``.
        self.declared_schedules: dict[str, scheduling.ScheduleSpec] = {}
        self.status_auth_callback: Callable[[], bool] | None = None
        self.status_form_fields_callback: Callable[[], Mapping[str, str] | None] | None = None
        if app is not None:
            self.init_app(app, db=db, cache=cache)

    # -- set-up ---------------------------------------------------------------

    def init_app(self, app: Flask, *, db: Any = None, cache: Any = None) -> None:
        """Register the extension on ``app``: config, tables, tick, routes and CLI."""
        if "indexnow" in app.extensions:
            raise RuntimeError("IndexNow is already registered on this app; call init_app once per app.")
        db = db if db is not None else self._db
        if db is None:
            db = app.extensions.get("sqlalchemy")
        if db is None:
            raise RuntimeError(
                "IndexNow needs the app's Flask-SQLAlchemy object: init_app(app, db=db), "
                "after db.init_app(app)."
            )
        settings = load_settings(app.config)
        if settings.implied_dry_run:  # an app's own tests (or a debug run) never reach a real engine
            logger.warning("IndexNow: dry run, because %s and neither INDEXNOW_ENDPOINT(S) nor INDEXNOW_DRY_RUN "
                           "is set: nothing is sent to a search engine. Set INDEXNOW_DRY_RUN = False to send.",
                           settings.implied_dry_run)
        cache = self._resolve_cache(app, cache if cache is not None else self._cache, settings.cache_config)
        state = IndexNowState(
            extension=self, db=db, cache=cache, models=get_models(db, settings.table_prefix), settings=settings
        )
        app.extensions["indexnow"] = state
        events.connect_receivers()
        bridge.install()
        state.ticker = tick_module.make_ticker(app, state)
        app.after_request(tick_module.schedule_after_response)

        register_web(app, state)
        app.cli.add_command(indexnow_group)

    @staticmethod
    def _resolve_cache(app: Flask, cache: Any, own_config: dict[str, Any] | Any) -> Any:
        if cache is None:
            config = {"CACHE_TYPE": "SimpleCache", **dict(own_config)}
            cache = Cache()
            cache.init_app(app, config=config)
        elif cache not in app.extensions.get("cache", {}):
            raise RuntimeError("Call cache.init_app(app) before indexnow.init_app(app, cache=cache).")
        backend = type(app.extensions["cache"][cache]).__name__
        if backend == "NullCache":
            warnings.warn(
                "IndexNow: NullCache cannot hold the tick lock or the next-due time; every request "
                "will query the queue. Use Redis (or SimpleCache on one process).",
                IndexNowWarning,
                stacklevel=3,
            )
        return cache

    # -- registration -----------------------------------------------------------

    def watch(
        self,
        model: type,
        *,
        url: Callable[[Any], str | None],
        published: Callable[[Any], Any] | None = None,
        published_at: Callable[[Any], datetime | date | None] | None = None,
        deleted: Callable[[Any], Any] | None = None,
        fingerprint: Callable[[Any], Any] | None = None,
        related: Callable[[Any], Iterable[str] | None] | None = None,
        fields: Iterable[str] | None = None,
        sitemap: bool = True,
        lastmod: Callable[[Any], datetime | date | None] | None = None,
    ) -> None:
        """Register how to read ``model``; SQLAlchemy models are then queued on every change.

        ``url`` returns the resource's absolute URL; ``published`` and
        ``deleted`` whether it is live (default: published, not deleted);
        ``published_at`` a future publication time makes the row wait.
        ``fingerprint`` returns what identifies the content: saving unchanged
        content after a successful delivery queues nothing. ``related`` returns
        more URLs (listing pages) queued as ``update`` with the resource, and
        on its delete or unpublish too (read from the state before the change).
        ``fields`` names the attributes (columns or relationships) whose change
        is a content change: a flush that changes none of them queues nothing
        and runs no SQL, unless the URL or the published/deleted state changed.
        ``sitemap=False`` leaves the model out of the sitemap the extension
        serves (INDEXNOW_SITEMAP_URL); ``lastmod`` returns a resource's
        ``<lastmod>`` there (default: when the extension last saw it change).

        Every function sees the state before a change when the bridge compares
        (properties, hybrids, methods and related objects included).
        """
        if not callable(url):
            raise TypeError("watch() needs url=, a function returning the resource's absolute URL")
        for name, fn in (("published", published), ("published_at", published_at), ("deleted", deleted),
                         ("fingerprint", fingerprint), ("related", related), ("lastmod", lastmod)):
            if fn is not None and not callable(fn):
                raise TypeError(f"watch(): {name}= must be a function of the resource")
        if not isinstance(sitemap, bool):
            raise TypeError(f"watch(): sitemap= must be True or False, got {sitemap!r}")
        watched = bridge.check_fields(model, fields) if fields is not None else None
        self.adapters[model] = Adapter(url, published, published_at, deleted, fingerprint, related, watched,
                                       sitemap=sitemap, lastmod=lastmod)
        bridge.track_history(model)

    def status_auth(self, fn: F) -> F:
        """Decorator: ``fn()`` returns True when the current user may see the status page."""
        self.status_auth_callback = fn
        return fn

    def status_form_fields(self, fn: F) -> F:
        """Decorator: ``fn()`` returns hidden fields (name → value) for every form of the status page.

        For a host whose own CSRF scheme refuses every POST without its field
        (a ``nonce`` checked in ``before_request``, say): the buttons then carry
        it, beside the page's own token. Called in the request of each page view.
        """
        self.status_form_fields_callback = fn
        return fn

    def job(self, name: str) -> Callable[[F], F]:
        """Decorator: register ``fn(payload)`` as the handler of jobs called ``name``."""
        if not isinstance(name, str) or not name.strip():
            raise ValueError("a job handler needs a non-empty name")

        def register(fn: F) -> F:
            self.job_handlers[name] = fn
            return fn

        return register

    # -- the queue ------------------------------------------------------------------

    def enqueue(
        self,
        url: str,
        action: str = "update",
        available_at: datetime | None = None,
        *,
        commit: bool = True,
    ) -> str | None:
        """Queue ``url`` (``update`` or ``delete``) on ``db.session``; commit unless told not to.

        Raises :class:`InvalidURLError` for a URL that may not be submitted.
        Returns the URL as queued (normalised), or None when nothing was queued
        (INDEXNOW_ENABLED is False, or its content is unchanged). In a
        transaction of the caller's (``commit=False``, or a session holding
        the caller's changes) the row waits in the inbox until the next pass
        merges it (see :meth:`merge_inbox`); in one of its own, a transient
        refusal (deadlock, lock timeout, serialization failure) is retried,
        and raised once the retries run out.
        """
        return queue.enqueue(get_state(), url, action, available_at, commit=commit)

    def enqueue_many(
        self, urls: Iterable[str], action: str = "update", available_at: datetime | None = None,
        *, commit: bool = True,
    ) -> queue.EnqueueResult:
        """Queue many URLs with set-based upserts; invalid ones are listed in the result."""
        return queue.enqueue_many(get_state(), urls, action, available_at, commit=commit)

    def merge_inbox(self) -> int:
        """Merge what the site's transactions queued (the inbox) into the queue now; returns how many events.

        Every pass does this first; call it before reading the queue table
        yourself (a test, a script) to see those rows there.
        """
        return merge.merge_inbox(get_state(), get_state().engine())

    def process_queue(self, limit: int | None = None) -> worker.PassResult:
        """Run one worker pass of at most ``limit`` rows (default INDEXNOW_BATCH_SIZE)."""
        return worker.process_queue(get_state(), limit)

    def tick(self) -> worker.PassResult | None:
        """Run one tick by hand, whatever INDEXNOW_QUEUE_ENABLED says."""
        return tick_module.tick(get_state())

    def retry_failed(self) -> int:
        """Put every failed row back to pending; returns how many."""
        return queue.retry_failed(get_state())

    def verify(self, url: str, *, mode: str | None = None) -> Verdict:
        """Ask for the page at ``url`` and say whether engines would index it; nothing is queued or sent.

        Returns a :class:`~flask_indexnow.verify.Verdict` (``indexable``, ``reason``,
        ``detail``). ``mode``: ``"app"`` (the app itself, in-process) or ``"http"``
        (a real GET); default INDEXNOW_VERIFY, or ``"app"`` when that is off.
        Works in and out of requests (needs an application context).
        """
        return verification.verify_url(get_state(), url, mode)

    # -- schedules and jobs -------------------------------------------------------

    def schedule(self, handler: str, payload: Any = None, *, name: str | None = None) -> scheduling.PendingSchedule:
        """Start describing a recurring job; finish with ``.every()``/``.cron()`` … ``.save()`` or ``.declare()``.

        ``name`` (default: the handler) is the schedule's key, so one handler
        can have several schedules.
        """
        return scheduling.PendingSchedule(handler, payload, name=name, extension=self)

    @property
    def scheduler(self) -> scheduling.Scheduler:
        """The current app's schedules: ``.list()``, ``.remove(name)``, ``.pause(name)``, ``.sync()`` …"""
        return scheduling.Scheduler(get_state())

    def prune_history(self, days: int | None = None) -> scheduling.PruneResult:
        """Delete history and finished jobs older than ``days`` (default INDEXNOW_HISTORY_RETENTION_DAYS)."""
        return scheduling.prune_history(get_state(), days)

    @property
    def models(self) -> Models:
        """The model classes of the current app (``indexnow.models.Queue`` …)."""
        return get_state().models

    def state(self, app: Flask | None = None) -> IndexNowState:
        return get_state(app)
