"""Recurring schedules and jobs (SPEC §6). Being built: see issue 3."""

from __future__ import annotations

from ..state import IndexNowState


def ensure_builtin_schedules(state: IndexNowState) -> None:
    """Placeholder until the scheduler lands; the tick calls it as its backup cron."""
