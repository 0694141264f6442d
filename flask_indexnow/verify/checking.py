"""Which hosts' robots.txt disallows every page: the ``robots`` configuration check's question."""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import urlsplit

import sqlalchemy as sa

from .. import clock
from ..state import IndexNowState, current_app_object
from .verifier import Verifier


def hosts_to_look_at(state: IndexNowState, limit: int) -> list[str]:
    """Origins (``scheme://host``): the closed allow-list's, then those skipped for robots.txt in the last 24 h."""
    settings = state.settings
    scheme = urlsplit(settings.base_url).scheme if settings.base_url else "https"
    origins = [f"{scheme}://{host}" for host in sorted(settings.allowed_hosts or ())]
    history = state.models.history
    since = clock.utcnow() - timedelta(hours=24)
    with state.engine().connect() as connection:
        found = connection.execute(
            sa.select(history.c.host, sa.func.min(history.c.url))
            .where(history.c.status == "skipped", history.c.created_at >= since, history.c.error.like("robots:%"))
            .group_by(history.c.host).order_by(history.c.host).limit(limit)
        ).all()
    for _host, url in found:
        parts = urlsplit(url)
        origins.append(f"{parts.scheme}://{parts.netloc}")
    return list(dict.fromkeys(origins))[:limit]


def blocked_hosts(state: IndexNowState, limit: int) -> list[str]:
    """The hosts (of :func:`hosts_to_look_at`) whose robots.txt disallows ``/`` for ``*``."""
    origins = hosts_to_look_at(state, limit)
    if not origins:
        return []
    blocked = []
    with Verifier(state, current_app_object(), state.settings.verify or "app") as verifier:
        for origin in origins:
            if verifier.robots.get(origin + "/", verifier.fetch).blocks_site:
                blocked.append(urlsplit(origin).netloc)
    return blocked
