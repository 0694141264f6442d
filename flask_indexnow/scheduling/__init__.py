"""Recurring schedules and jobs.

Schedules live in ``indexnow_schedules`` and are turned into jobs in
``indexnow_jobs`` by the scheduler tick, which ``flask indexnow work`` runs
about once a minute (or ``flask indexnow schedule run`` by hand). Workers claim
and run the jobs. The modules, one job each:

- :mod:`.intervals` and :mod:`.cron`: the timing grammars;
- :mod:`.schedules`: schedule rows, :class:`OverlapPolicy`, saving;
- :mod:`.builder`: ``indexnow.schedule(...)…save()``;
- :mod:`.scheduler`: the tick (exactly-once dispatch) and the heartbeat;
- :mod:`.controls`: pause, resume, trigger; :mod:`.sync`: declared schedules;
- :mod:`.history`: each occurrence's outcome; :mod:`.dispatching`: an occurrence's job;
- :mod:`.upgrade`: bringing an older schedules table up to date (``init-db``);
- :mod:`.jobs`: claim, run, retry;
- :mod:`.builtins` and :mod:`.prune`: the built-in handlers;
- :mod:`.runner` and :mod:`.cli`: the long-running worker and the commands.
"""

from __future__ import annotations

from .builder import PendingSchedule
from .builtins import ensure_builtin_schedules
from .controls import ControlResult, UnknownScheduleError
from .history import Occurrence, last_outcomes
from .jobs import JobsResult
from .prune import PruneResult, prune_history
from .runner import Worker
from .scheduler import Scheduler, scheduler_active
from .schedules import PROCESS_QUEUE, PRUNE_HISTORY, OverlapPolicy, ScheduleInfo, ScheduleSpec
from .sync import SyncResult

__all__ = [
    "PROCESS_QUEUE",
    "PRUNE_HISTORY",
    "ControlResult",
    "JobsResult",
    "Occurrence",
    "OverlapPolicy",
    "PendingSchedule",
    "PruneResult",
    "ScheduleInfo",
    "ScheduleSpec",
    "Scheduler",
    "SyncResult",
    "UnknownScheduleError",
    "Worker",
    "ensure_builtin_schedules",
    "last_outcomes",
    "prune_history",
    "scheduler_active",
]
