"""The SQLAlchemy bridge of ``watch()``: model changes become signals, inside the flush.

One ``after_flush`` listener on SQLAlchemy's ``Session`` class serves every
watched model of every app. It runs inside the flush, so the queue rows it
writes (on the session's own connection) commit or roll back with the content
change. It compares each changed object with its state before the flush, so a
published page whose URL changed gets ``delete`` for the old URL and
``update`` for the new one.

The state before the flush is a shadow instance (see :mod:`.before`), so the
adapter functions may read properties, hybrids, methods and related objects.
A change of a relationship collection is a change. With ``watch(fields=…)``,
a flush that touches none of those attributes is compared in Python only (URL,
liveness, publication date) and, when they are equal, costs no SQL at all.

Drafts that were not live before and are not live now queue nothing: telling
search engines that a never-published URL is gone would only spend quota.
"""

from __future__ import annotations

import logging
from typing import Any

import sqlalchemy as sa
from flask import current_app, has_app_context
from sqlalchemy import event
from sqlalchemy.orm import Session
from werkzeug.routing import BuildError

from .. import signals
from ..queue import discard_pending_due, flush_pending_due
from ..signals import send_signal
from ..state import IndexNowState, current_app_object
from . import baseurl, skipped, standalone
from .before import Shadows
from .events import Adapter, EventError, find_adapter, related_list

logger = logging.getLogger(__name__)

_installed = False
#: What a failed adapter call returns (told apart from a function that returned None).
_FAILED: Any = object()


def _after_flush(session: Session, flush_context: Any) -> None:
    if not has_app_context():
        return
    state = current_app.extensions.get("indexnow")
    if state is None or not state.settings.enabled or not state.extension.adapters:
        return
    app = current_app_object()
    adapters = state.extension.adapters
    shadows: Shadows | None = None
    for obj in list(session.new):
        adapter = find_adapter(adapters, obj)
        if adapter is not None and _live(adapter, obj, obj):
            _send(app, state, session, signals.resource_saved, adapter, obj, obj)
    for obj in list(session.dirty):
        adapter = find_adapter(adapters, obj)
        if adapter is None:
            continue
        if adapter.fields is not None:
            # Only these attributes are content; the rest may still move or unpublish it.
            attrs = sa.inspect(obj).attrs
            content_changed = any(attrs[name].history.has_changes() for name in adapter.fields)
        elif session.is_modified(obj):  # collections included: post.tags.append(tag) is a change
            content_changed = True
        else:
            continue
        shadows = shadows or Shadows()
        _changed(app, state, session, adapter, obj, shadows.of(obj), content_changed)
    for obj in list(session.deleted):
        adapter = find_adapter(adapters, obj)
        if adapter is None:
            continue
        shadows = shadows or Shadows()
        before = shadows.of(obj)
        if _live(adapter, before, obj):
            url = _url(state, adapter, before, obj)
            if url is _FAILED or url is None:
                continue
            send_signal(signals.resource_before_delete, app, resource=obj, url=url)
            send_signal(signals.resource_deleted, app, resource=obj, url=url, session=session,
                        related=_related(state, adapter, before, obj))


def _changed(app: Any, state: IndexNowState, session: Session, adapter: Adapter, obj: Any, before: Any,
             content_changed: bool) -> None:
    """Queue what a change of ``obj`` means, comparing it with ``before`` (its shadow).

    The "after" state is read first: whatever it loads is then in memory for
    the shadow, which only falls back to the real object for unloaded attributes.
    """
    is_live = _live(adapter, obj, obj)
    new_url = _url(state, adapter, obj, obj) if is_live else None
    was_live = _live(adapter, before, obj)
    old_url = _url(state, adapter, before, obj) if was_live else None
    if new_url is _FAILED or old_url is _FAILED:
        return  # logged and counted: without both URLs a move cannot be told from an edit
    if not content_changed and adapter.published_at is not None and is_live and was_live:
        # A new publication date is no content change, but the row must wait for it.
        content_changed = _published_at(adapter, before, obj) != _published_at(adapter, obj, obj)
    gone = was_live and old_url is not None and (not is_live or old_url != new_url)
    if gone:
        # Unpublished, or moved: the old address is gone, whatever happens to the new one;
        # the listing pages that showed it changed too (read from the state before).
        send_signal(signals.resource_unpublished, app, resource=obj, url=old_url, session=session,
                    related=_related(state, adapter, before, obj))
    if is_live and not was_live:
        _send(app, state, session, signals.resource_published, adapter, obj, obj, url=new_url)
    elif is_live and (content_changed or gone):
        _send(app, state, session, signals.resource_saved, adapter, obj, obj, url=new_url)


def _send(app: Any, state: IndexNowState, session: Session, signal: Any, adapter: Adapter, target: Any,
          obj: Any, url: Any = None) -> None:
    """Send ``signal`` for a live ``obj`` whose URL and related pages are read from ``target``."""
    if url is None:
        url = _url(state, adapter, target, obj)
    if url is _FAILED:
        return
    if url is None:
        logger.warning("IndexNow: %s skipped: its url= function returned no URL", skipped.describe(obj))
        skipped.record(state)
        return
    send_signal(signal, app, resource=obj, url=url, published=True, deleted=False, session=session,
                related=_related(state, adapter, target, obj))


def _live(adapter: Adapter, target: Any, obj: Any) -> bool:
    try:
        return adapter.is_live(target)
    except Exception:
        logger.exception("IndexNow: %s skipped: its published=/deleted= function failed", skipped.describe(obj))
        return False


def _published_at(adapter: Adapter, target: Any, obj: Any) -> Any:
    try:
        return adapter.published_at(target) if adapter.published_at is not None else None
    except Exception:
        logger.exception("IndexNow: reading the published_at= of %s failed", skipped.describe(obj))
        return None


def _url(state: IndexNowState, adapter: Adapter, target: Any, obj: Any) -> Any:
    """``adapter.url(target)``, or :data:`_FAILED` (logged on one line, counted)."""
    try:
        return baseurl.call(state.settings.base_url, adapter.url, target)
    except (BuildError, RuntimeError) as exc:  # url_for: unknown endpoint, or no request and no SERVER_NAME
        hint = "" if state.settings.base_url else " (set INDEXNOW_BASE_URL to build URLs outside requests)"
        logger.warning("IndexNow: %s skipped: its URL could not be built: %s%s",
                       skipped.describe(obj), _first_line(exc), hint)
    except Exception:
        logger.exception("IndexNow: %s skipped: its url= function failed", skipped.describe(obj))
    skipped.record(state)
    return _FAILED


def _related(state: IndexNowState, adapter: Adapter, target: Any, obj: Any) -> list[str]:
    if adapter.related is None:
        return []
    try:
        return related_list(baseurl.call(state.settings.base_url, adapter.related, target))
    except EventError as exc:
        logger.warning("IndexNow: related pages of %s skipped: %s", skipped.describe(obj), _first_line(exc))
    except (BuildError, RuntimeError) as exc:
        logger.warning("IndexNow: related pages of %s skipped: a URL could not be built: %s",
                       skipped.describe(obj), _first_line(exc))
    except Exception:
        logger.exception("IndexNow: related pages of %s skipped: its related= function failed",
                         skipped.describe(obj))
    skipped.record(state)
    return []


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _after_commit(session: Session) -> None:
    if has_app_context():
        state = current_app.extensions.get("indexnow")
        if state is not None:
            flush_pending_due(state, session)


def _after_rollback(session: Session) -> None:
    discard_pending_due(session)


def check_fields(model: type, fields: Any) -> frozenset[str]:
    """``watch(fields=…)`` as a set of attribute names of ``model``; a clear error otherwise.

    Read from the class's instrumented attributes, so models whose relationships
    point at classes not defined yet can be watched before mappers are configured.
    """
    if isinstance(fields, str) or not hasattr(fields, "__iter__"):
        raise TypeError(f"watch(): fields= must be a list of attribute names, got {fields!r}")
    names = list(fields)
    if not all(isinstance(name, str) for name in names):
        raise TypeError(f"watch(): fields= must hold attribute names (strings), got {names!r}")
    try:
        mapper: Any = sa.inspect(model)
    except sa.exc.NoInspectionAvailable:
        raise TypeError(f"watch(): fields= needs an SQLAlchemy model, and {model.__name__} is not one") from None
    manager = mapper.class_manager
    unknown = [name for name in names if name not in manager]
    if unknown:
        raise ValueError(
            f"watch({model.__name__}): fields= names {', '.join(map(repr, unknown))}, "
            f"which {'is not a column or relationship' if len(unknown) == 1 else 'are not columns or relationships'} "
            f"of {model.__name__}"
        )
    return frozenset(names)


def track_history(model: type) -> None:
    """Make SQLAlchemy keep the old value of every column and many-to-one of ``model`` when set.

    Without this, setting an attribute that was expired (as all are after a
    commit) records no old value, and a changed URL could not be told from the
    new one. ``active_history`` loads the old value first, only for watched models.
    """
    try:
        mapper: Any = sa.inspect(model)
    except sa.exc.NoInspectionAvailable:
        return  # not an SQLAlchemy model: signals only
    keys = [attribute.key for attribute in mapper.column_attrs]
    # A many-to-one too: set while unloaded, its old target would be unknown.
    keys += [rel.key for rel in mapper.relationships if not rel.uselist]
    for key in keys:
        descriptor = getattr(model, key)
        if not event.contains(descriptor, "set", _keep_old_value):
            event.listen(descriptor, "set", _keep_old_value, active_history=True)


def _keep_old_value(target: Any, value: Any, oldvalue: Any, initiator: Any) -> None:
    """No-op listener; registering it with ``active_history=True`` is the point."""


def install() -> None:
    """Listen to every Session once per process (idempotent)."""
    global _installed
    if _installed:
        return
    event.listen(Session, "after_flush", _after_flush)
    event.listen(Session, "after_commit", _after_commit)
    event.listen(Session, "after_soft_rollback", lambda session, previous: _after_rollback(session))
    standalone.install()
    _installed = True
