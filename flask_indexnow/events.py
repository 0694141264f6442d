"""From CMS events to queue rows: the adapters of ``watch()`` and the signal receivers.

Receivers are connected once per process and serve every app: each signal is
sent with its app as sender, and the receiver looks that app's state up. A
receiver never raises into the code that sent the signal: arguments that make
no sense and URLs that fail validation are logged and the event is skipped.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

import sqlalchemy as sa
from flask import Flask, current_app, has_app_context

from . import signals
from .errors import InvalidURLError, TablesMissingError
from .missing import is_missing_table, missing_tables_message
from .queue import Entry, after_write, make_entry, write_entries
from .state import IndexNowState, logger

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

    def is_live(self, resource: Any) -> bool:
        published = True if self.published is None else bool(self.published(resource))
        deleted = False if self.deleted is None else bool(self.deleted(resource))
        return published and not deleted


def find_adapter(adapters: dict[type, Adapter], resource: Any) -> Adapter | None:
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
    url = kwargs.get("url", _MISSING)
    if url is _MISSING or url is None:
        url = adapter.url(resource) if adapter is not None else None
    if url is not None and not isinstance(url, str):
        raise EventError(f"url must be a string, got {type(url).__name__}")

    published = _flag(kwargs, "published")
    deleted = _flag(kwargs, "deleted")
    if adapter is not None:
        if published is None:
            published = True if adapter.published is None else bool(adapter.published(resource))
        if deleted is None:
            deleted = False if adapter.deleted is None else bool(adapter.deleted(resource))
    live = (True if published is None else published) and not deleted

    published_at = kwargs.get("published_at", _MISSING)
    if published_at is _MISSING:
        published_at = adapter.published_at(resource) if adapter is not None and adapter.published_at else None
    if published_at is not None and not isinstance(published_at, (datetime, date)):
        raise EventError(f"published_at must be a datetime, got {type(published_at).__name__}")

    fingerprint = None
    related: tuple[str, ...] = ()
    if adapter is not None and resource is not None:
        if adapter.fingerprint is not None:
            value = adapter.fingerprint(resource)
            fingerprint = None if value is None else _digest(value)
        if adapter.related is not None:
            related = tuple(u for u in (adapter.related(resource) or ()) if u)
    return Resolved(url, live, published_at, fingerprint, related)


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
    try:
        if has_app_context() and current_app._get_current_object() is sender:  # type: ignore[attr-defined]
            _queue_event(state, kind, resource, kwargs)
        else:
            with sender.app_context():
                _queue_event(state, kind, resource, kwargs)
    except (EventError, InvalidURLError) as exc:
        logger.warning("IndexNow: %s event skipped: %s", kind, exc)
    except Exception as exc:
        if isinstance(exc, TablesMissingError) or is_missing_table(exc):
            logger.error("IndexNow: %s event skipped: %s", kind, missing_tables_message(state.prefix))
            return
        logger.exception("IndexNow: %s event skipped: the resource could not be read", kind)


def _queue_event(state: IndexNowState, kind: str, resource: Any, kwargs: dict[str, Any]) -> None:
    if kind == "before_delete":
        if resource is None:
            raise EventError("resource_before_delete needs resource=")
        url = resolve(state, resource, kwargs).url
        if url:
            state.remember(resource_key(resource), url)
        return
    if kind == "deleted":
        url = kwargs.get("url") or (state.recall(resource_key(resource)) if resource is not None else None)
        if url is None and resource is not None:
            url = resolve(state, resource, kwargs).url
        if url is None:
            raise EventError("resource_deleted needs resource= (after resource_before_delete) or url=")
        _write(state, [make_entry(state, url, "delete")], kwargs.get("session"))
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
    for related in info.related:
        try:
            entries.append(make_entry(state, related, "update"))
        except InvalidURLError as exc:
            logger.warning("IndexNow: related URL %r skipped: %s", related, exc)
    _write(state, entries, kwargs.get("session"))


def _write(state: IndexNowState, entries: list[Entry], session: Any | None) -> None:
    if session is not None:
        # Inside the sender's transaction (the SQLAlchemy bridge passes the
        # flushing session): commit or roll back with the content change. The
        # savepoint keeps a failed queue write (a missing table, say) from
        # poisoning that transaction on PostgreSQL: the save goes through and
        # the failure is logged.
        connection = session.connection()
        with connection.begin_nested():
            written = write_entries(state, connection, entries)
        after_write(state, written, session)
        return
    db_session = state.db.session
    try:
        written = write_entries(state, db_session, entries)
        db_session.commit()
    except Exception:
        db_session.rollback()
        raise
    after_write(state, written, None)


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
