"""Several engines (INDEXNOW_ENDPOINTS): what each queue row's ``engine`` names, and each engine's object.

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

Each engine is an :class:`~flask_indexnow.state.Engine`, made once per
endpoint and kept by the state: the functions that keep something per engine
(the 429/503 pause, the request budget, the 403 streaks, the log lines) take
it as an argument, next to the app's state, which every engine shares.
"""

from __future__ import annotations

from .state import Engine, IndexNowState

#: The ``engine`` of a row meant for the first (or only) configured engine.
DEFAULT_ENGINE = ""


def endpoints(state: IndexNowState) -> tuple[str, ...]:
    """Every configured endpoint URL, the first one first."""
    settings = state.settings
    return settings.endpoints or (settings.endpoint,)


def queue_engines(state: IndexNowState) -> tuple[str, ...]:
    """The ``engine`` values an enqueued URL gets a row for: one per engine."""
    return state.settings.endpoints or (DEFAULT_ENGINE,)


def resolve(state: IndexNowState, engine: str | None) -> str | None:
    """The endpoint URL a row of ``engine`` goes to, or None when that engine is no longer configured."""
    known = endpoints(state)
    if not engine:
        return known[0]
    return engine if engine in known else None


def engine(state: IndexNowState, endpoint: str) -> Engine:
    """The engine of ``endpoint``: made on first use, then the same object (so its memory lasts)."""
    found = state.engines.get(endpoint)
    if found is None:
        with state.lock:
            found = state.engines.setdefault(endpoint, Engine(endpoint))
    return found


def configured(state: IndexNowState) -> list[Engine]:
    """One engine per configured endpoint, in the configured order."""
    return [engine(state, endpoint) for endpoint in endpoints(state)]


def first(state: IndexNowState) -> Engine:
    """The first (or only) configured engine: the one rows of engine ``""`` go to."""
    return engine(state, endpoints(state)[0])
