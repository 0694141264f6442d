"""Each configured engine as the status document shows it: its queue counts, its pause, its request budget."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from .. import engines
from ..delivery import budget, worker
from ..state import IndexNowState


def engine_rows(state: IndexNowState, connection: Any) -> list[dict[str, Any]]:
    """Each configured engine as the status document shows it: queue counts, pause, request budget.

    Rows of an engine no longer configured are counted under the first
    engine only when their key is ``""``; others are not listed (the next pass fails them).
    """
    queue = state.models.queue
    counts: dict[tuple[str, str], int] = {}
    for engine, status, count in connection.execute(
        sa.select(queue.c.engine, queue.c.status, sa.func.count()).group_by(queue.c.engine, queue.c.status)
    ):
        endpoint = engines.resolve(state, engine)
        if endpoint is not None:
            counts[(endpoint, status)] = counts.get((endpoint, status), 0) + int(count)
    # An inbox event becomes one pending row per engine when the next pass merges it.
    waiting = int(connection.execute(sa.select(sa.func.count()).select_from(state.models.inbox)).scalar_one())
    listed = []
    for engine in engines.configured(state):
        endpoint = engine.endpoint
        pause = worker.endpoint_pause(state, engine)
        usage = budget.usage(state, engine)
        listed.append({
            "endpoint": endpoint,
            "pending": counts.get((endpoint, "pending"), 0) + waiting,
            "processing": counts.get((endpoint, "processing"), 0),
            "failed": counts.get((endpoint, "failed"), 0),
            "paused_until": None if pause is None else pause[0].isoformat(),
            "pause_status": None if pause is None else pause[1],
            "budget": None if usage is None else usage.as_dict(),
        })
    return listed
