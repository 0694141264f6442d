"""``indexnow.schedule(handler, payload)``: the fluent builder of a recurring job.

Every method checks its input at once, so a typo in an interval or a time
zone fails where it was written, not at the first tick::

    indexnow.schedule("cleanup").every("1 hour").on_queue("maintenance").save()
    indexnow.schedule("report", {"type": "summary"}).cron("0 3 * * *", timezone="Europe/Rome").save()
"""

from __future__ import annotations

from typing import Any

from ..state import get_state
from .cron import Cron
from .intervals import parse_interval
from .schedules import (
    OverlapPolicy,
    ScheduleInfo,
    ScheduleSpec,
    check_handler,
    check_payload,
    check_queue,
    save_schedule,
)


class PendingSchedule:
    """A schedule being described; :meth:`save` stores it (upsert by handler)."""

    def __init__(self, handler: str, payload: Any = None) -> None:
        self.handler = check_handler(handler)
        self.payload = check_payload(payload)
        self.kind: str | None = None
        self.expression: str | None = None
        self.timezone = "UTC"
        self.queue = "default"
        self.policy = OverlapPolicy.ALLOW

    def every(self, interval: str) -> PendingSchedule:
        """Run every ``interval`` (``"30 minutes"``, ``"1 hour 30 minutes"``, ``"1 month"`` …)."""
        parse_interval(interval)
        self.kind, self.expression, self.timezone = "interval", interval.strip(), "UTC"
        return self

    def cron(self, expression: str, timezone: str | None = None) -> PendingSchedule:
        """Run at the times of a 5-field cron ``expression``, read in ``timezone`` (default UTC)."""
        cron = Cron.parse(expression, timezone)
        self.kind, self.expression, self.timezone = "cron", cron.expression, cron.timezone
        return self

    def on_queue(self, queue: str) -> PendingSchedule:
        """Dispatch the jobs into ``queue`` (default ``"default"``)."""
        self.queue = check_queue(queue)
        return self

    def overlap(self, policy: OverlapPolicy | str) -> PendingSchedule:
        """What to do while a job of this handler is still pending or running (default ALLOW)."""
        self.policy = OverlapPolicy.coerce(policy)
        return self

    def save(self) -> ScheduleInfo:
        """Store the schedule for the current app; ``RuntimeError`` without every()/cron()."""
        if self.kind is None or self.expression is None:
            raise RuntimeError(
                f"schedule {self.handler!r} has no timing: call every('1 hour') or cron('0 3 * * *') before save()"
            )
        spec = ScheduleSpec(self.handler, self.payload, self.queue, self.kind, self.expression,
                            self.timezone, self.policy)
        return save_schedule(get_state(), spec)

    def __repr__(self) -> str:
        timing = f"{self.kind} {self.expression!r}" if self.kind else "no timing"
        return f"<PendingSchedule {self.handler!r} {timing} queue={self.queue!r} overlap={self.policy.value}>"
