"""The one-line answer at the top of the status page: is it working, and if not, why."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from ..state import IndexNowState

#: A due row waiting longer than this (or INDEXNOW_STALE_AFTER, if longer) means nothing is delivering.
LATE_AFTER = 900


@dataclass(frozen=True)
class Verdict:
    level: str  # "ok" | "warning" | "error"
    title: str
    reasons: list[str] = field(default_factory=list)
    #: Warnings that do not stop delivery (no worker seen, dry run …).
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


#: An engine's pause: its endpoint, when the pause ends, and the HTTP status that asked for it.
Pause = tuple[str, datetime, int]


def judge(state: IndexNowState, data: dict[str, Any], pauses: Sequence[Pause] = ()) -> Verdict:
    """Sum up :func:`stats.collect_status` data: errors first, then what needs a look.

    Failing warning-level checks (no worker seen, dry run) are notes: they
    weaken a promise but do not stop the URLs from going out. Failing
    attention-level checks (an open or empty host allow-list, a cache that
    does not answer) need a look, and so does every engine that asked to
    pause (a 429, or a 5xx with ``Retry-After``), the first one or another.
    """
    errors = [c["message"] for c in data["checks"] if c["status"] == "error"]
    notes = [c["message"] for c in data["checks"] if c["status"] == "warning"]
    if errors:
        return Verdict("error", "Not sending", errors, notes)
    queue = data["queue"]
    reasons = [c["message"] for c in data["checks"] if c["status"] == "attention"]
    several = len(data.get("engines") or ()) > 1
    for endpoint, until, status in pauses:
        reasons.append(f"Engine {endpoint} asked to pause (HTTP {status}); sending to it resumes at {until:%Y-%m-%d %H:%M} UTC."
                       if several else
                       f"The endpoint asked to pause (HTTP {status}); sending resumes at {until:%Y-%m-%d %H:%M} UTC.")
    if queue["failed"]:
        reasons.append(f"{queue['failed']} URL(s) failed and wait for “Retry failed” or a new change.")
    rejected = [h["host"] for h in data["hosts"] if h["state"] == "rejected"]
    if rejected:
        shown = ", ".join(rejected[:3]) + (" …" if len(rejected) > 3 else "")
        reasons.append(f"The engine rejected the key for {shown}: see Hosts and keys.")
    age = queue["oldest_due_age_seconds"]
    if age is not None and age > max(LATE_AFTER, state.settings.stale_after):
        reasons.append(f"The oldest due URL has waited {age / 60:.0f} minutes: is anything processing the queue?")
    if reasons:
        return Verdict("warning", "Needs attention", reasons, notes)
    delivered = data["history_24h"]["success"] + data["history_24h"]["dry_run"]
    due = queue["due_now"]
    detail = f"{delivered} URL(s) delivered in the last 24 hours; " + (
        f"{due} due now." if due else "nothing is due now."
    )
    return Verdict("ok", "Working", [detail], notes)
