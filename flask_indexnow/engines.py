"""Several engines (INDEXNOW_ENDPOINTS): what each queue row's ``engine`` names, and each engine's view.

Each engine as the status document shows it is :mod:`flask_indexnow.status.engines`.

Every queue row belongs to one engine: enqueueing writes one row per
configured engine, and each row has its own attempts, retry time and claim,
so an engine that accepted a URL is never sent it again because another one
failed. The ``engine`` column holds:

- ``""`` with one engine (INDEXNOW_ENDPOINT, the default, and every row
  written before the column existed): "the first configured engine". A site
  that changes INDEXNOW_ENDPOINT keeps delivering what is queued, as before.
- the endpoint URL with INDEXNOW_ENDPOINTS.

A row whose engine is no longer configured is failed by the next pass that
claims it, with an error that says so (see :func:`resolve`).

Per-engine state (the 429/503 pause, the 403 streaks, the log lines) is kept
by the functions that already keep it per ``settings.endpoint``; they are
handed an *engine view*: the app's state with that engine as its endpoint,
made once per engine and kept (so its pause survives from pass to pass).
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib

from .state import IndexNowState

#: The ``engine`` of a row meant for the first (or only) configured engine.
DEFAULT_ENGINE = ""


def endpoint_digest(endpoint: str) -> str:
    """A short, fixed-width name for ``endpoint`` in cache keys (its pause, budget and 403 streaks)."""
    return hashlib.sha256(endpoint.encode("utf-8")).hexdigest()[:16]


def endpoints(state: IndexNowState) -> tuple[str, ...]:
    """Every configured endpoint URL, the first one first."""
    settings = state.settings
    return settings.endpoints or (settings.endpoint,)


def queue_engines(state: IndexNowState) -> tuple[str, ...]:
    """The ``engine`` values an enqueued URL gets a row for: one per engine."""
    return state.settings.endpoints or (DEFAULT_ENGINE,)


def resolve(state: IndexNowState, engine: str | None) -> str | None:
    """The endpoint URL a row of ``engine`` goes to, or None when that engine is no longer configured."""
    configured = endpoints(state)
    if not engine:
        return configured[0]
    return engine if engine in configured else None


def view(state: IndexNowState, endpoint: str) -> IndexNowState:
    """``state`` as one engine sees it: its settings name ``endpoint``; its pause is its own.

    Everything else (the database, the cache and its breaker, the models, the
    logs) is shared with ``state``. The view of the first engine with a single
    engine is ``state`` itself.
    """
    if endpoint == state.settings.endpoint:
        return state
    known = state.engine_views.get(endpoint)
    if known is not None and known[0] is state.settings:
        return known[1]
    # First use, or new settings (a test helper swaps them): a new view that keeps the old one's pause.
    found = copy.copy(state)  # shares the database, cache, breaker, logs and request counts
    found.engine_views = {}
    found.settings = dataclasses.replace(state.settings, endpoint=endpoint)
    found.paused = None if known is None else known[1].paused
    state.engine_views[endpoint] = (state.settings, found)
    return found


def views(state: IndexNowState) -> list[IndexNowState]:
    """One view per configured engine, in the configured order."""
    return [view(state, endpoint) for endpoint in endpoints(state)]
