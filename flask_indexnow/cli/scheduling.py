"""``flask indexnow work``, ``schedule list|add|remove|run`` and ``prune-history``.

Each command is a few lines over the library functions the tests call too;
mistakes print one line and exit 1 (``friendly_errors``).
"""

from __future__ import annotations

import json
import logging
from datetime import datetime
from typing import Any

import click
from flask.cli import AppGroup

from ..scheduling.builder import PendingSchedule
from ..scheduling.builtins import ensure_builtin_schedules
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
    """Recurring jobs: list, add, remove, run."""


@schedule_group.command("list")
@friendly_errors
def schedule_list_command() -> None:
    """Show every schedule with its next and last run."""
    schedules = Scheduler(get_state()).list()
    if not schedules:
        click.echo("No schedules.")
        return
    rows = [("HANDLER", "WHEN", "QUEUE", "OVERLAP", "NEXT RUN", "LAST RUN")]
    for s in schedules:
        rows.append((s.handler + ("" if s.enabled else " (disabled)"), s.describe, s.queue, s.overlap.value,
                     _when(s.next_run), _when(s.last_run)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        click.echo("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())


@schedule_group.command("add")
@click.argument("handler")
@click.option("--every", "interval", metavar="INTERVAL", help='e.g. "30 minutes", "1 hour", "1 day", "1 month".')
@click.option("--cron", "cron", metavar="EXPR", help='A 5-field cron expression, e.g. "0 3 * * *".')
@click.option("--timezone", metavar="TZ", help="Time zone of --cron (default UTC), e.g. Europe/Rome.")
@click.option("--queue", default="default", show_default=True, help="Queue the jobs go to.")
@click.option("--overlap", type=click.Choice(_POLICIES, case_sensitive=False), default="allow", show_default=True,
              help="While the previous job is pending or running: allow a new one, skip, or buffer.")
@click.option("--payload", metavar="JSON", help="JSON passed to the handler, e.g. '{\"type\": \"summary\"}'.")
@friendly_errors
def schedule_add_command(handler: str, interval: str | None, cron: str | None, timezone: str | None,
                         queue: str, overlap: str, payload: str | None) -> None:
    """Add or replace the schedule of HANDLER."""
    if (interval is None) == (cron is None):
        raise click.ClickException("give exactly one of --every or --cron")
    if timezone is not None and cron is None:
        raise click.ClickException("--timezone only applies to --cron (intervals run in UTC)")
    builder = PendingSchedule(handler, _parse_payload(payload))
    if interval is not None:
        builder.every(interval)
    else:
        builder.cron(cron or "", timezone)
    saved = builder.on_queue(queue).overlap(overlap).save()
    click.echo(f"Saved {saved.handler}: {saved.describe} on queue {saved.queue!r}, "
               f"overlap {saved.overlap.value}; next run {_when(saved.next_run)}")


@schedule_group.command("remove")
@click.argument("handler")
@friendly_errors
def schedule_remove_command(handler: str) -> None:
    """Remove the schedule of HANDLER (jobs already dispatched stay)."""
    if not Scheduler(get_state()).remove(handler):
        raise click.ClickException(f"no schedule for handler {handler!r} (see `flask indexnow schedule list`)")
    click.echo(f"Removed the schedule of {handler}")


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
