"""The status document: one builder for ``status.json`` and ``flask indexnow status --json``.

Both outputs are the same document, checked against the JSON Schema shipped as
``flask_indexnow/schemas/status.schema.json``. Members are only ever *added*, and
only in a minor version; a member is never renamed or removed in a patch release,
so a monitoring script written against one version keeps working.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

from .. import engines
from ..delivery import worker
from ..state import IndexNowState
from ..stats import collect_status
from ..watching import skipped
from .verdict import judge

#: The package resource that holds the document's JSON Schema.
SCHEMA_RESOURCE = "schemas/status.schema.json"


def status_document(state: IndexNowState, connection: Any = None) -> dict[str, Any]:
    """Every count the status page shows, the checks, the verdict and the 429 pause, as JSON-ready data.

    Opens its own connection when ``connection`` is None (the CLI); the page
    passes the one it reads its tables with.
    """
    if connection is None:
        with state.engine().connect() as own:
            return status_document(state, own)
    data = collect_status(state, connection=connection)
    pause = worker.endpoint_pause(state)
    data["endpoint_paused_until"] = None if pause is None else pause[0].isoformat()
    data["verdict"] = (judge(state, data) if pause is None else judge(state, data, *pause)).as_dict()
    data["engines"] = engines.engine_rows(state, connection)
    data["skipped_events_24h"] = skipped.last_24h(state)  # None: the cache could not say
    return data


def status_schema_text() -> str:
    """The JSON Schema of :func:`status_document`, as shipped in the package."""
    return resources.files("flask_indexnow").joinpath(SCHEMA_RESOURCE).read_text(encoding="utf-8")
