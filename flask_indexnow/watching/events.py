"""From CMS events to queue rows: the adapters of ``watch()`` and the signal receivers.

Receivers are connected once per process and serve every app: each signal is
sent with its app as sender, and the receiver looks that app's state up. A
receiver never raises into the code that sent the signal: arguments that make
no sense and URLs that fail validation are logged and the event is skipped.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

import sqlalchemy as sa
from flask import Flask, has_app_context
from werkzeug.routing import BuildError

from .. import inbox, signals
from ..clock import as_utc
from ..errors import InvalidURLError, TablesMissingError
from ..missing import is_missing_table, missing_tables_message
from ..queue import Entry, after_write, make_entry
from ..retry import ends_transaction
from ..safetext import safe_text
from ..state import IndexNowState, current_app_object
from . import baseurl, skipped, standalone

logger = logging.getLogger(__name__)

_MISSING: Any = object()


@dataclass(frozen=True)
class Adapter:
    """How to read a watched model: its URL, whether it is live, and when."""

    url: Callable[[Any], str | None]
    published: Callable[[Any], Any] | None = None
    published_at: Callable[[Any], datetime | date | None] | None = None
    deleted: Callable[[Any], Any] | None = None
    fingerprint: Callable[[Any], Any] | None = None
    related: Callable[[Any], Iterable[str] | None] | None = None
    #: With ``watch(fields=…)``: the attributes whose change is a content change.
    fields: frozenset[str] | None = None
    #: ``watch(sitemap=False)``: the model's URLs are left out of the served sitemap.
    sitemap: bool = True
    #: ``watch(lastmod=…)``: the sitemap's lastmod of a resource (else the last change seen).
    lastmod: Callable[[Any], datetime | date | None] | None = None

    def is_published(self, resource: Any) -> bool:
        return True if self.published is None else bool(self.published(resource))

    def is_deleted(self, resource: Any) -> bool:
        return False if self.deleted is None else bool(self.deleted(resource))

    def is_live(self, resource: Any) -> bool:
        published = self.is_published(resource)
        return live(published, self.is_deleted(resource))

    def is_due(self, resource: Any, now: datetime) -> bool:
        """Live and not waiting for its publication time: an ``update`` of it would be sent now.

        What the sitemap lists (the queue holds the row of a future
        ``published_at`` until then, see ``queue._due``).
        """
        if not self.is_live(resource):
            return False
        when = self.published_at(resource) if self.published_at is not None else None
        return when is None or as_utc(when) <= now


def live(published: bool | None, deleted: bool | None) -> bool:
    """The one rule: a resource is live when it is published (or nothing says it is not) and not deleted."""
    return (True if published is None else published) and not deleted


def find_adapter(adapters: Mapping[type, Adapter], resource: Any) -> Adapter | None:
    for cls in type(resource).__mro__:
        adapter = adapters.get(cls)
        if adapter is not None:
            return adapter
    return None


class EventError(ValueError):
    """A signal's arguments do not describe a resource we can queue."""


@dataclass(frozen=True)
class Resolved:
    url: str | None
    live: bool
    published_at: datetime | date | None
    fingerprint: str | None
    related: tuple[str, ...]


def resolve(state: IndexNowState, resource: Any, kwargs: dict[str, Any]) -> Resolved:
    """Combine a resource's adapter with the signal's explicit arguments."""
    adapter = find_adapter(state.extension.adapters, resource) if resource is not None else None
    base_url = state.settings.base_url
    url = kwargs.get("url", _MISSING)
    if url is _MISSING or url is None:
        url = baseurl.call(base_url, adapter.url, resource) if adapter is not None else None
    if url is not None and not isinstance(url, str):
        raise EventError(f"url must be a string, got {type(url).__name__}")

    published = _flag(kwargs, "published")
    deleted = _flag(kwargs, "deleted")
    if adapter is not None:
        if published is None:
            published = adapter.is_published(resource)
        if deleted is None:
            deleted = adapter.is_deleted(resource)
    is_live = live(published, deleted)

    published_at = kwargs.get("published_at", _MISSING)
    if published_at is _MISSING:
        published_at = adapter.published_at(resource) if adapter is not None and adapter.published_at else None
    if published_at is not None and not isinstance(published_at, (datetime, date)):
        raise EventError(f"published_at must be a datetime, got {type(published_at).__name__}")

    fingerprint = None
    if adapter is not None and resource is not None and adapter.fingerprint is not None:
        value = adapter.fingerprint(resource)
        fingerprint = None if value is None else _digest(value)
    return Resolved(url, is_live, published_at, fingerprint, related_urls(state, adapter, resource, kwargs))


def related_urls(state: IndexNowState, adapter: Adapter | None, resource: Any,
                 kwargs: dict[str, Any]) -> tuple[str, ...]:
    """The signal's ``related=`` URLs, else those of the adapter's ``related`` function."""
    given = kwargs.get("related")
    if given is not None:
        if isinstance(given, str) or not isinstance(given, Iterable):
            raise EventError(f"related must be a list of URLs, got {type(given).__name__}")
        return tuple(u for u in given if u)
    if adapter is None or resource is None or adapter.related is None:
        return ()
    try:
        return tuple(related_list(baseurl.call(state.settings.base_url, adapter.related, resource)))
    except Exception as exc:  # the resource's own URL still goes out
        traceback = not isinstance(exc, (BuildError, RuntimeError, EventError))
        logger.warning("IndexNow: related pages of %s skipped: %s", skipped.describe(resource), _first_line(exc),
                       exc_info=traceback)
        skipped.record(state)
        return ()


def related_list(found: Any) -> list[str]:
    """What a ``related=`` function returned, as its URLs; EventError for a single string.

    A str is iterable: it would be read as one-character "URLs", each refused.
    """
    if isinstance(found, (str, bytes)):
        raise EventError(f"related= must return a list of URLs, got a single {type(found).__name__} {found!r}")
    return [u for u in (found or ()) if u]


def _flag(kwargs: dict[str, Any], name: str) -> bool | None:
    value = kwargs.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
        return bool(value)
    raise EventError(f"{name} must be True or False, got {value!r}")


def _digest(value: Any) -> str:
    """Fingerprints are stored as SHA-256 of their repr, whatever the function returns."""
    return hashlib.sha256(repr(value).encode("utf-8")).hexdigest()


def resource_key(resource: Any) -> Any:
    """A key that names the same resource across instances (SQLAlchemy identity) or this object."""
    try:
        identity = sa.inspect(resource).identity
    except Exception:
        identity = None
    if identity is not None:
        return (type(resource).__qualname__, identity)
    return ("object", id(resource))


def _state_of(sender: Any) -> IndexNowState | None:
    if isinstance(sender, Flask):
        state = sender.extensions.get("indexnow")
        if state is not None:
            return state  # type: ignore[no-any-return]
    logger.warning(
        "IndexNow: a signal was sent with sender %r, which is not an app with IndexNow; "
        "send signals with the app as sender (current_app._get_current_object())", sender,
    )
    return None


def _handle(sender: Any, kind: str, kwargs: dict[str, Any]) -> None:
    state = _state_of(sender)
    if state is None or not state.settings.enabled:
        return
    resource = kwargs.get("resource")
    what = f" ({skipped.describe(resource)})" if resource is not None else ""
    try:
        if has_app_context() and current_app_object() is sender:
            _queue_event(state, kind, resource, kwargs)
        else:
            with sender.app_context():
                _queue_event(state, kind, resource, kwargs)
    except (EventError, InvalidURLError, BuildError) as exc:
        logger.warning("IndexNow: %s event skipped%s: %s", kind, what, _first_line(exc))
        skipped.record(state)
    except Exception as exc:
        if kwargs.get("session") is not None and ends_transaction(exc):
            # The site's transaction is over (or doomed): its flush or commit must fail with this
            # error, as if its own statement had met it; swallowed, the site would commit nothing.
            raise
        # An ERROR is the record of an event the site lost: it names the URLs, which are all that a
        # signal sent with url= alone says of its resource.
        lost = _described(resource, kwargs)
        if isinstance(exc, TablesMissingError) or is_missing_table(exc):
            logger.error("IndexNow: %s event skipped%s: %s", kind, lost, missing_tables_message(state.prefix))
        else:
            logger.exception("IndexNow: %s event skipped%s: the resource could not be read or queued", kind, lost)
        skipped.record(state)


#: URLs of a lost event named in its log line, at most.
_URLS_NAMED = 5
#: Characters of each named URL, at most.
URL_SHOWN = 300


def _described(resource: Any, kwargs: dict[str, Any]) -> str:
    """`` (Page 3; https://…/a; related: https://…/b)``: the resource, and the URLs the signal gave."""
    parts = [skipped.describe(resource)] if resource is not None else []
    url = kwargs.get("url")
    if isinstance(url, str) and url:
        parts.append(safe_text(url, URL_SHOWN))  # one line: a URL that failed may hold a newline
    related = kwargs.get("related")
    if isinstance(related, (list, tuple)) and related:
        shown = [safe_text(u, URL_SHOWN) for u in related[:_URLS_NAMED]]
        parts.append("related: " + ", ".join(shown) + (", …" if len(related) > _URLS_NAMED else ""))
    return f" ({'; '.join(parts)})" if parts else ""


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _queue_event(state: IndexNowState, kind: str, resource: Any, kwargs: dict[str, Any]) -> None:
    if kind == "before_delete":
        if resource is None:
            raise EventError("resource_before_delete needs resource=")
        url = resolve(state, resource, kwargs).url
        if url:
            state.watching.remember(resource_key(resource), url)
        return
    if kind == "deleted":
        remembered = state.watching.recall(resource_key(resource)) if resource is not None else None
        url = kwargs.get("url") or remembered
        if url is None and resource is not None:
            url = resolve(state, resource, kwargs).url
        if url is None:
            raise EventError("resource_deleted needs resource= (after resource_before_delete) or url=")
        adapter = find_adapter(state.extension.adapters, resource) if resource is not None else None
        entries = [make_entry(state, url, "delete")]
        # The listing pages that showed the resource changed too (issue 9, point 11).
        entries.extend(_related_entries(state, related_urls(state, adapter, resource, kwargs)))
        _write(state, entries, kwargs.get("session"))
        return

    info = resolve(state, resource, kwargs)
    if info.url is None:
        raise EventError("no URL: pass url= or watch() the resource's class")
    if kind == "unpublished" or (kind == "saved" and not info.live):
        action = "delete"
    else:
        action = "update"
    entries = [make_entry(state, info.url, action, info.published_at if action == "update" else None,
                          info.fingerprint if action == "update" else None)]
    entries.extend(_related_entries(state, info.related))
    _write(state, entries, kwargs.get("session"))


def _related_entries(state: IndexNowState, urls: Iterable[str]) -> list[Entry]:
    entries = []
    for related in urls:
        try:
            entries.append(make_entry(state, related, "update"))
        except InvalidURLError as exc:
            logger.warning("IndexNow: related URL %r skipped: %s", related, exc)
            skipped.record(state)
    return entries


def _write(state: IndexNowState, entries: list[Entry], session: Any | None) -> None:
    if session is not None:
        # Inside the sender's transaction (the SQLAlchemy bridge passes the
        # flushing session): commit or roll back with the content change, in
        # the inbox, which no pass locks (issue 18). A failure that ended the
        # transaction is raised (see _handle); inbox.write_in_transaction says
        # when a savepoint keeps any other failure from poisoning it.
        connection = session.connection(bind_arguments={"mapper": state.models.Queue})
        inbox.write_in_transaction(state, connection, entries)
        after_write(state, entries, session)
        return
    # Not part of the host's unit of work: a transaction of its own, and the
    # host's db.session is never flushed, committed or rolled back here.
    standalone.write(state, entries)


def _receiver(kind: str) -> Callable[..., None]:
    def receive(sender: Any, **kwargs: Any) -> None:
        _handle(sender, kind, kwargs)

    receive.__name__ = f"indexnow_on_{kind}"
    return receive


_RECEIVERS = {
    signals.resource_saved: _receiver("saved"),
    signals.resource_published: _receiver("published"),
    signals.resource_unpublished: _receiver("unpublished"),
    signals.resource_before_delete: _receiver("before_delete"),
    signals.resource_deleted: _receiver("deleted"),
}


def connect_receivers() -> None:
    """Connect the queue's receivers (idempotent; blinker ignores repeats)."""
    for signal, receiver in _RECEIVERS.items():
        signal.connect(receiver, weak=False)
