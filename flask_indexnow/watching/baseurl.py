"""``INDEXNOW_BASE_URL``: adapter functions build canonical URLs everywhere.

``url_for(..., _external=True)`` needs a request (or SERVER_NAME) and takes the
host and scheme of the request it runs in: outside a request it fails, behind a
proxy without ProxyFix it gives ``http://``, under a forged ``Host`` it gives
that host. With a base URL set, ``url=`` and ``related=`` functions run inside
a request context made for that base URL, in and out of requests, so neither
the lack of a request nor the current request's Host and scheme reach them.

The context is set only around those calls and only for the current context
(a ``contextvars`` token, reset right after): the host's request, its session
and its teardown functions are untouched (a pushed-and-popped request context
would run the app's ``teardown_request`` functions in the middle of a flush).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar
from urllib.parse import urlsplit

from flask.globals import _cv_request
from werkzeug.test import EnvironBuilder

from ..state import current_app_object

T = TypeVar("T")


@functools.lru_cache(maxsize=16)
def _environ(base_url: str) -> dict[str, Any]:
    builder = EnvironBuilder(path="/", base_url=base_url)
    try:
        return builder.get_environ()
    finally:
        builder.close()


@contextmanager
def canonical_request(base_url: str) -> Iterator[None]:
    """Run the block in a request context for ``base_url`` (an app context must be active)."""
    app = current_app_object()
    context = app.request_context(dict(_environ(base_url)))
    parts = urlsplit(base_url)
    # Our own adapter, so that neither SERVER_NAME nor TRUSTED_HOSTS can swap the host.
    context.url_adapter = app.url_map.bind(parts.netloc, script_name="/", url_scheme=parts.scheme)
    token = _cv_request.set(context)
    try:
        yield
    finally:
        _cv_request.reset(token)


def call(base_url: str | None, fn: Callable[[Any], T], resource: Any) -> T:
    """``fn(resource)``, inside :func:`canonical_request` when a base URL is set."""
    if base_url is None:
        return fn(resource)
    with canonical_request(base_url):
        return fn(resource)
