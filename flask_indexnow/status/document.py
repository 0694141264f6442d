"""The status document: one builder for ``status.json`` and ``flask indexnow status --json``.

Both outputs are the same document, checked against the JSON Schema shipped as
``flask_indexnow/schemas/status.schema.json``. Members are only ever *added*, and
only in a minor version; a member is never renamed or removed in a patch release,
so a monitoring script written against one version keeps working.
"""

from __future__ import annotations

from datetime import datetime
from importlib import resources
from typing import Any

from ..scheduling.report import schedules_json
from ..state import IndexNowState
from ..stats import collect_status
from ..watching import skipped
from .engines import engine_rows
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
    data["engines"] = engine_rows(state, connection)
    # The first engine's pause keeps its own member; the verdict weighs every engine's.
    data["endpoint_paused_until"] = data["engines"][0]["paused_until"] if data["engines"] else None
    pauses = [(e["endpoint"], datetime.fromisoformat(e["paused_until"]), e["pause_status"])
              for e in data["engines"] if e["paused_until"]]
    data["verdict"] = judge(state, data, pauses).as_dict()
    data["skipped_events_24h"] = skipped.last_24h(state)  # None: the cache could not say
    data["schedules"] = schedules_json(state, connection)  # each with its last outcome and result
    return data


def status_schema_text() -> str:
    """The JSON Schema of :func:`status_document`, as shipped in the package."""
    return resources.files("flask_indexnow").joinpath(SCHEMA_RESOURCE).read_text(encoding="utf-8")
