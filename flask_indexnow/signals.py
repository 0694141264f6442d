"""Blinker signals: the CMS events that feed the queue, and what the queue reports.

Send the event signals with the app as sender::

    from flask import current_app
    from flask_indexnow import signals
    signals.resource_saved.send(current_app._get_current_object(), resource=page)

Every event signal accepts ``resource=`` (an object of a class registered with
``indexnow.watch``) and, instead of or on top of it, ``url=``, ``published=``
(bool), ``published_at=`` (datetime; naive means UTC) and ``deleted=`` (bool).
``session=`` (a SQLAlchemy session) makes the queue rows join that session's
transaction instead of being committed at once (they wait in the inbox until
the next pass merges them); the SQLAlchemy bridge of ``watch()`` passes the
flushing session. Arguments that make no sense are logged and the event is
skipped: a signal never raises into its sender, with one exception: when the
database ended the session's transaction during the write (a deadlock, a
serialization failure, a lost connection), that error is raised, so the
site's flush or commit fails with it instead of committing nothing.
"""

from __future__ import annotations

import logging
from typing import Any

from blinker import NamedSignal, Namespace

from .retry import ends_transaction

#: The signals (what the docs list); :func:`send_signal` is the extension's own helper.
__all__ = [
    "batch_sent", "delivery_failed", "resource_before_delete", "resource_deleted", "resource_published",
    "resource_saved", "resource_unpublished", "url_enqueued",
]

logger = logging.getLogger(__name__)

_signals = Namespace()

#: Sent by the site when a resource is saved (CMS OnDocFormSave), and by the
#: SQLAlchemy bridge on insert or update of a watched model. Queues ``update``
#: when the resource is published and not deleted, else ``delete``.
#: Keyword arguments: ``resource``, ``url``, ``published``, ``published_at``,
#: ``deleted``, ``session`` (all optional, but a URL must be found).
resource_saved = _signals.signal("resource-saved")

#: Sent when a resource is published (OnResourcePublish). Queues ``update``
#: (waiting until ``published_at`` when that is in the future).
#: Keyword arguments: as :data:`resource_saved`.
resource_published = _signals.signal("resource-published")

#: Sent when a resource is unpublished (OnResourceUnPublish). Queues ``delete``.
#: Keyword arguments: as :data:`resource_saved`.
resource_unpublished = _signals.signal("resource-unpublished")

#: Sent just before a resource is deleted (OnBeforeDocFormDelete): the
#: extension remembers its URL for :data:`resource_deleted`.
#: Keyword arguments: ``resource`` (required), ``url``.
resource_before_delete = _signals.signal("resource-before-delete")

#: Sent after a resource was deleted (OnDocFormDelete). Queues ``delete`` for
#: the URL remembered by :data:`resource_before_delete`, or for ``url=``.
#: Keyword arguments: ``resource``, ``url``, ``session``.
resource_deleted = _signals.signal("resource-deleted")

#: Sent by the extension after queue rows were written (committed, or joined
#: to the caller's transaction). Keyword arguments: ``urls`` (list of str),
#: ``action`` ("update" or "delete").
url_enqueued = _signals.signal("url-enqueued")

#: Sent by the extension after each POST answered 2xx (or, with
#: INDEXNOW_DRY_RUN, would have been sent). Keyword arguments: ``host``,
#: ``urls`` (list of str), ``status`` (HTTP status, None in a dry run),
#: ``duration`` (seconds), ``engine`` (the endpoint URL that accepted them:
#: with INDEXNOW_ENDPOINTS, one signal per engine).
batch_sent = _signals.signal("batch-sent")

#: Sent by the extension when a POST did not succeed. Keyword arguments:
#: ``host``, ``urls``, ``status`` (HTTP status or None for a network error),
#: ``error`` (text), ``permanent`` (True when the rows were failed, False when
#: they will be retried), ``engine`` (the endpoint URL that answered).
delivery_failed = _signals.signal("delivery-failed")


def send_signal(signal: NamedSignal, app: Any, **kwargs: Any) -> None:
    """Send one of the extension's own signals; a failing receiver is logged, never raised.

    The rows it reports on are already written (or joined to the caller's
    transaction): a receiver's bug must not roll back a save or leave a batch
    claimed until INDEXNOW_STALE_AFTER.
    """
    try:
        signal.send(app, **kwargs)
    except Exception as exc:
        if kwargs.get("session") is not None and ends_transaction(exc):
            raise  # the site's transaction is over: its flush must fail with the error (issue 18)
        logger.exception("IndexNow: a receiver of the %r signal failed", signal.name)
