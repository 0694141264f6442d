"""``flask indexnow work``, ``schedule list|add|remove|run|pause|resume|trigger|sync|history`` and ``prune-history``.

Each command is a few lines over the library functions the tests call too;
mistakes print one line and exit 1 (``friendly_errors``).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import click
from flask.cli import AppGroup

from ..safetext import safe_text
from ..scheduling import controls
from ..scheduling.builder import PendingSchedule
from ..scheduling.builtins import ensure_builtin_schedules
from ..scheduling.controls import UnknownScheduleError
from ..scheduling.history import latest
from ..scheduling.prune import MAX_DAYS, prune_history
from ..scheduling.runner import Worker
from ..scheduling.scheduler import Scheduler
from ..scheduling.schedules import OverlapPolicy
from ..state import get_state
from .common import command, friendly_errors

_POLICIES = [p.value for p in OverlapPolicy]


@command("work")
@click.option("--once", is_flag=True, help="One pass of URLs and jobs, then exit (schedules are not evaluated).")
@click.option("--queue", "queues", multiple=True, metavar="Q",
              help="Only run jobs of this queue (repeatable; default: every queue). URLs are always delivered.")
@click.option("--sleep", type=click.FloatRange(min=0), default=5.0, show_default=True,
              help="Seconds to wait when there was nothing to do.")
@friendly_errors
def work_command(once: bool, queues: tuple[str, ...], sleep: float) -> None:
    """Deliver URLs, run jobs and evaluate schedules until SIGTERM/SIGINT."""
    worker = Worker(get_state(), queues=queues, sleep=sleep)
    if once:
        result = worker.run_once(schedules=False)
        click.echo(str(result))
        if result.error:
            raise click.ClickException(result.error)
        return
    with _log_to_stderr(), worker.signals_handled():
        click.echo(f"IndexNow worker running (queues: {', '.join(queues) or 'all'}); stop with SIGTERM or Ctrl-C")
        worker.run()
    click.echo("IndexNow worker stopped")


@click.group("schedule", cls=AppGroup)
def schedule_group() -> None:
    """Recurring jobs: list, add, remove, run, pause, resume, trigger, sync, history."""


@schedule_group.command("list")
@friendly_errors
def schedule_list_command() -> None:
    """Show every schedule: its next and last run, whether it is paused, where it came from."""
    state = get_state()
    schedules = Scheduler(state).list()
    if not schedules:
        click.echo("No schedules.")
        return
    last = latest(state, [s.name for s in schedules])
    rows = [("NAME", "HANDLER", "WHEN", "QUEUE", "OVERLAP", "NEXT RUN", "LAST RUN", "STATE", "FROM", "LAST OUTCOME")]
    for s in schedules:
        outcome = last.get(s.name)
        rows.append((s.name, s.handler, s.describe, s.queue, s.overlap.value, _when(s.next_run), _when(s.last_run),
                     "paused" if s.paused else "active", s.source,
                     "-" if outcome is None else f"{outcome.outcome} ({outcome.result})"))
    _table(rows)


def _table(rows: Sequence[Sequence[str]]) -> None:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        click.echo("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())


@schedule_group.command("add")
@click.argument("handler")
@click.option("--name", metavar="NAME", help="The schedule's name (default: the handler); one handler may have several.")
@click.option("--every", "interval", metavar="INTERVAL", help='e.g. "30 minutes", "1 hour", "1 day", "1 month".')
@click.option("--cron", "cron", metavar="EXPR", help='A 5-field cron expression, e.g. "0 3 * * *".')
@click.option("--timezone", metavar="TZ", help="Time zone of --cron (default UTC), e.g. Europe/Rome.")
@click.option("--queue", default="default", show_default=True, help="Queue the jobs go to.")
@click.option("--overlap", type=click.Choice(_POLICIES, case_sensitive=False), default="allow", show_default=True,
              help="While the previous job is pending or running: allow a new one, skip, or buffer.")
@click.option("--payload", metavar="JSON", help="JSON passed to the handler, e.g. '{\"type\": \"summary\"}'.")
@click.option("--misfire-grace", metavar="INTERVAL", help='Drop an occurrence found later than this, e.g. "10 minutes".')
@click.option("--expires", metavar="INTERVAL", help='A job not started this long after it was due ends expired.')
@click.option("--max-attempts", type=click.IntRange(min=1, max=1000), help="Attempts of each job (default INDEXNOW_JOB_MAX_ATTEMPTS).")
@friendly_errors
def schedule_add_command(handler: str, name: str | None, interval: str | None, cron: str | None,
                         timezone: str | None, queue: str, overlap: str, payload: str | None,
                         misfire_grace: str | None, expires: str | None, max_attempts: int | None) -> None:
    """Add or replace the schedule of HANDLER (named HANDLER unless --name)."""
    if (interval is None) == (cron is None):
        raise click.ClickException("give exactly one of --every or --cron")
    if timezone is not None and cron is None:
        raise click.ClickException("--timezone only applies to --cron (intervals run in UTC)")
    builder = PendingSchedule(handler, _parse_payload(payload), name=name)
    if interval is not None:
        builder.every(interval)
    else:
        builder.cron(cron or "", timezone)
    if misfire_grace is not None:
        builder.misfire_grace(misfire_grace)
    if expires is not None:
        builder.expires(expires)
    if max_attempts is not None:
        builder.max_attempts(max_attempts)
    saved = builder.on_queue(queue).overlap(overlap).save()
    click.echo(f"Saved {saved.name}: {saved.describe} on queue {saved.queue!r}, "
               f"overlap {saved.overlap.value}; next run {_when(saved.next_run)}")


@schedule_group.command("remove")
@click.argument("name")
@friendly_errors
def schedule_remove_command(name: str) -> None:
    """Remove the schedule NAME (jobs already dispatched, and its history, stay)."""
    if not Scheduler(get_state()).remove(name):
        raise UnknownScheduleError(name)
    click.echo(f"Removed the schedule {name}")


@schedule_group.command("pause")
@click.argument("name")
@friendly_errors
def schedule_pause_command(name: str) -> None:
    """Stop dispatching the schedule NAME until it is resumed."""
    result = controls.pause(get_state(), name)
    click.echo(f"Paused {name}" if result.changed else f"{name} was already paused")


@schedule_group.command("resume")
@click.argument("name")
@click.option("--catch-up", is_flag=True, help="Run once now for the occurrences missed while paused.")
@friendly_errors
def schedule_resume_command(name: str, catch_up: bool) -> None:
    """Dispatch NAME again from its next occurrence (missed ones dropped unless --catch-up)."""
    result = Scheduler(get_state()).resume(name, catch_up=catch_up)
    if not result.changed:
        click.echo(f"{name} was not paused; next run {_when(result.schedule.next_run)}")
        return
    caught = f"; job {result.job_id} dispatched for the missed run" if result.job_id is not None else ""
    click.echo(f"Resumed {name}{caught}; next run {_when(result.schedule.next_run)}")


@schedule_group.command("trigger")
@click.argument("name")
@friendly_errors
def schedule_trigger_command(name: str) -> None:
    """Dispatch one job of NAME now (next and last run stay as they are)."""
    result = Scheduler(get_state()).trigger(name)
    if result.changed:
        click.echo(f"Triggered {name}: job {result.job_id}")
    else:
        click.echo(f"{name} was already triggered: job {result.job_id} has not started yet")


@schedule_group.command("sync")
@friendly_errors
def schedule_sync_command() -> None:
    """Store the schedules the code declares; pause those no longer declared."""
    click.echo(f"Synced declared schedules: {Scheduler(get_state()).sync()}")


@schedule_group.command("history")
@click.argument("name")
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True, help="Occurrences to show.")
@friendly_errors
def schedule_history_command(name: str, limit: int) -> None:
    """Show the last occurrences of NAME, newest first: outcome, due time, job and its result."""
    occurrences = Scheduler(get_state()).history(name, limit)
    if not occurrences:
        click.echo(f"No occurrence of {name} yet.")
        return
    rows = [("DUE", "OUTCOME", "JOB", "RESULT", "DURATION", "ERROR")]
    for o in occurrences:
        rows.append((_when(o.due_at), o.outcome, "-" if o.job_id is None else str(o.job_id), o.result,
                     "-" if o.duration is None else f"{o.duration:.1f}s",
                     safe_text((o.error or "-").splitlines()[0][:120]) if o.error else "-"))
    _table(rows)


@schedule_group.command("run")
@friendly_errors
def schedule_run_command() -> None:
    """Evaluate the schedules once now: dispatch a job for each one that is due."""
    state = get_state()
    if state.settings.scheduler_enabled:
        ensure_builtin_schedules(state)
    count = Scheduler(state).tick()
    click.echo(f"Dispatched {count} job(s)")


@command("prune-history")
@click.option("--days", type=click.IntRange(min=1, max=MAX_DAYS), default=None,
              help="Keep this many days (default INDEXNOW_HISTORY_RETENTION_DAYS).")
@friendly_errors
def prune_history_command(days: int | None) -> None:
    """Delete history and finished jobs older than the retention period."""
    click.echo(str(prune_history(get_state(), days)))


def _parse_payload(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise click.ClickException(f"--payload is not valid JSON: {exc}") from None


def _when(value: datetime | None) -> str:
    return "-" if value is None else value.strftime("%Y-%m-%d %H:%M:%S UTC")


class _log_to_stderr:
    """Show the worker's log lines when the app has configured no logging at all."""

    def __init__(self) -> None:
        self.handler: logging.Handler | None = None
        self.previous_level = logging.NOTSET

    def __enter__(self) -> None:
        package = logging.getLogger("flask_indexnow")
        if logging.getLogger().handlers or package.handlers:
            return
        self.handler = logging.StreamHandler()
        self.handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
        self.previous_level = package.level
        package.addHandler(self.handler)
        package.setLevel(logging.INFO)

    def __exit__(self, *exc: object) -> None:
        if self.handler is not None:
            package = logging.getLogger("flask_indexnow")
            package.removeHandler(self.handler)
            package.setLevel(self.previous_level)
