"""``indexnow.schedule(handler, payload)``: the fluent builder of a recurring job.

Every method checks its input at once, so a typo in an interval or a time
zone fails where it was written, not at the first tick::

    indexnow.schedule("cleanup").every("1 hour").on_queue("maintenance").save()
    indexnow.schedule("report", {"type": "summary"}).cron("0 3 * * *", timezone="Europe/Rome").save()
    indexnow.schedule("report", {"type": "full"}, name="full-report").cron("@weekly").expires("1 hour").declare()

``save()`` writes the schedule now (an app context is needed); ``declare()``
only records it on the extension, so it can run at import time, and
``scheduler.sync()`` (run by ``flask indexnow work`` at start) writes every
declared schedule and pauses those no longer declared.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..state import get_state
from .cron import Cron
from .intervals import parse_interval
from .schedules import (
    OverlapPolicy,
    ScheduleInfo,
    ScheduleSpec,
    check_duration,
    check_handler,
    check_max_attempts,
    check_name,
    check_payload,
    check_queue,
    save_schedule,
)


class Declarations(Protocol):
    """Where :meth:`PendingSchedule.declare` records a schedule: the ``IndexNow`` object (above this layer)."""

    declared_schedules: dict[str, ScheduleSpec]


class PendingSchedule:
    """A schedule being described; :meth:`save` stores it (upsert by name), :meth:`declare` records it."""

    def __init__(self, handler: str, payload: Any = None, *, name: str | None = None,
                 extension: Declarations | None = None) -> None:
        self.handler = check_handler(handler)
        self.payload = check_payload(payload)
        self.name = self.handler if name is None else check_name(name)
        self.extension = extension
        self.kind: str | None = None
        self.expression: str | None = None
        self.timezone = "UTC"
        self.queue = "default"
        self.policy = OverlapPolicy.ALLOW
        self.grace: str | None = None
        self.expiry: str | None = None
        self.attempts: int | None = None

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

    def misfire_grace(self, interval: str) -> PendingSchedule:
        """Drop an occurrence found more than ``interval`` late (recorded ``missed``) instead of running it late.

        Without it, a schedule that missed occurrences (downtime) runs once as
        soon as it can, then carries on in the future.
        """
        self.grace = check_duration(interval, "misfire_grace")
        return self

    def max_attempts(self, attempts: int) -> PendingSchedule:
        """The jobs this schedule dispatches get ``attempts`` tries (default INDEXNOW_JOB_MAX_ATTEMPTS)."""
        self.attempts = check_max_attempts(attempts)
        return self

    def expires(self, interval: str) -> PendingSchedule:
        """A job not started within ``interval`` after its occurrence was due ends ``expired``, unrun."""
        self.expiry = check_duration(interval, "expires")
        return self

    def spec(self) -> ScheduleSpec:
        """What this builder describes; ``RuntimeError`` without every()/cron()."""
        if self.kind is None or self.expression is None:
            raise RuntimeError(
                f"schedule {self.name!r} has no timing: call every('1 hour') or cron('0 3 * * *') "
                "before save() or declare()"
            )
        return ScheduleSpec(self.handler, self.payload, self.queue, self.kind, self.expression,
                            self.timezone, self.policy, name=self.name, misfire_grace=self.grace,
                            expires=self.expiry, max_attempts=self.attempts)

    def save(self) -> ScheduleInfo:
        """Store the schedule for the current app now (a schedule saved by hand: sync never touches it)."""
        return save_schedule(get_state(), self.spec())

    def declare(self) -> ScheduleSpec:
        """Record the schedule on the extension (no app context needed); ``scheduler.sync()`` stores it.

        Declaring the same name again replaces the earlier declaration.
        """
        if self.extension is None:
            raise RuntimeError("declare() needs a schedule made by indexnow.schedule(...)")
        spec = self.spec()
        self.extension.declared_schedules[spec.name] = spec
        return spec

    def __repr__(self) -> str:
        timing = f"{self.kind} {self.expression!r}" if self.kind else "no timing"
        named = "" if self.name == self.handler else f" name={self.name!r}"
        return (f"<PendingSchedule {self.handler!r}{named} {timing} queue={self.queue!r} "
                f"overlap={self.policy.value}>")
