"""The SQLAlchemy bridge of ``watch()``: model changes become signals, inside the flush.

One ``after_flush`` listener on SQLAlchemy's ``Session`` class serves every
watched model of every app. It runs inside the flush, so the queue rows it
writes (on the session's own connection) commit or roll back with the content
change. It compares each changed object with its state before the flush, so a
published page whose URL changed gets ``delete`` for the old URL and
``update`` for the new one.

Drafts that were not live before and are not live now queue nothing: telling
search engines that a never-published URL is gone would only spend quota.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from flask import current_app, has_app_context
from sqlalchemy import event
from sqlalchemy.orm import Session

from . import signals
from .events import Adapter, find_adapter
from .queue import discard_pending_due, flush_pending_due, send_signal
from .state import logger

_installed = False


class _Before:
    """The object as it was before this flush: changed attributes give their old value."""

    def __init__(self, obj: Any) -> None:
        self._obj = obj
        self._attrs = sa.inspect(obj).attrs

    def __getattr__(self, name: str) -> Any:
        if name in self._attrs.keys():
            history = self._attrs[name].history
            if history.deleted:
                return history.deleted[0]
        return getattr(self._obj, name)


def _after_flush(session: Session, flush_context: Any) -> None:
    if not has_app_context():
        return
    state = current_app.extensions.get("indexnow")
    if state is None or not state.settings.enabled or not state.extension.adapters:
        return
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    adapters = state.extension.adapters
    for obj in list(session.new):
        adapter = find_adapter(adapters, obj)
        if adapter is not None and _safe(adapter.is_live, obj):
            send_signal(signals.resource_saved, app, resource=obj, session=session)
    for obj in list(session.dirty):
        adapter = find_adapter(adapters, obj)
        if adapter is not None and session.is_modified(obj, include_collections=False):
            _changed(app, session, adapter, obj)
    for obj in list(session.deleted):
        adapter = find_adapter(adapters, obj)
        if adapter is None:
            continue
        before = _Before(obj)
        if _safe(adapter.is_live, before):
            url = _safe(adapter.url, before)
            send_signal(signals.resource_before_delete, app, resource=obj, url=url)
            send_signal(signals.resource_deleted, app, resource=obj, url=url, session=session)


def _changed(app: Any, session: Session, adapter: Adapter, obj: Any) -> None:
    before = _Before(obj)
    was_live = _safe(adapter.is_live, before)
    is_live = _safe(adapter.is_live, obj)
    old_url = _safe(adapter.url, before) if was_live else None
    new_url = _safe(adapter.url, obj)
    if was_live and old_url and old_url != new_url:
        # The page moved: the old address is gone, whatever happens to the new one.
        send_signal(signals.resource_unpublished, app, resource=obj, url=old_url, session=session)
    if is_live and not was_live:
        send_signal(signals.resource_published, app, resource=obj, session=session)
    elif is_live:
        send_signal(signals.resource_saved, app, resource=obj, session=session)
    elif was_live and old_url == new_url:
        send_signal(signals.resource_unpublished, app, resource=obj, session=session)


def _safe(fn: Any, obj: Any) -> Any:
    try:
        return fn(obj)
    except Exception:
        logger.exception("IndexNow: reading a watched %s failed", type(obj).__name__)
        return None


def _after_commit(session: Session) -> None:
    if has_app_context():
        state = current_app.extensions.get("indexnow")
        if state is not None:
            flush_pending_due(state, session)


def _after_rollback(session: Session) -> None:
    discard_pending_due(session)


def track_history(model: type) -> None:
    """Make SQLAlchemy keep the old value of every column of ``model`` when it is set.

    Without this, setting an attribute that was expired (as all are after a
    commit) records no old value, and a changed URL could not be told from the
    new one. ``active_history`` loads the old value first, only for watched models.
    """
    try:
        mapper: Any = sa.inspect(model)
    except sa.exc.NoInspectionAvailable:
        return  # not an SQLAlchemy model: signals only
    for attribute in mapper.column_attrs:
        descriptor = getattr(model, attribute.key)
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
    _installed = True
