"""``flask indexnow process|status|enqueue|retry-failed|init-db``: the queue by hand."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import click
import sqlalchemy as sa

from .. import queue as queue_module
from ..delivery.worker import process_queue
from ..errors import InvalidURLError
from ..state import get_state
from ..status.document import status_document
from ..upgrade import upgrade_tables
from ..urls import check_url
from .common import command, friendly_errors


def create_tables() -> list[str]:
    """Create the extension's tables that do not exist yet; return their names."""
    state = get_state()
    engine = state.engine()
    existing = set(sa.inspect(engine).get_table_names())
    tables = state.models.tables
    state.db.metadata.create_all(bind=engine, tables=tables)
    return [t.name for t in tables if t.name not in existing]


@command("process")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Rows to claim (default INDEXNOW_BATCH_SIZE).")
@friendly_errors
def process_command(limit: int | None) -> None:
    """Run one full worker pass now."""
    result = process_queue(get_state(), limit)
    if result.skipped_reason:
        raise click.ClickException(f"nothing sent: {result.skipped_reason}")
    click.echo(str(result))


#: The text form's exit status for each verdict level (1 stays "a mistake", 2 "a bad option").
VERDICT_EXIT = {"ok": 0, "warning": 3, "error": 4}


@command("status")
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON (exit status 0).")
@friendly_errors
def status_command(as_json: bool) -> None:
    """Show the verdict, queue counts, recent deliveries, engine pauses and configuration checks.

    Exit status: 0 Working, 3 Needs attention, 4 Not sending (the text form only).
    """
    data = status_document(get_state())
    if as_json:
        click.echo(json.dumps(data, indent=2, sort_keys=True))
        return
    for line in status_lines(data):
        click.echo(line)
    raise click.exceptions.Exit(VERDICT_EXIT.get(data["verdict"]["level"], 0))


def status_lines(data: dict[str, Any]) -> list[str]:
    """The status document as text, the verdict first, as the page shows it."""
    return [*verdict_lines(data["verdict"]), *queue_lines(data), *engine_lines(data), *check_lines(data["checks"])]


def verdict_lines(verdict: dict[str, Any]) -> list[str]:
    """The page's verdict: its title, each reason, then the notes."""
    return [verdict["title"], *(f"  {reason}" for reason in verdict["reasons"]),
            *(f"  Note: {note}" for note in verdict["notes"])]


def queue_lines(data: dict[str, Any]) -> list[str]:
    q = data["queue"]
    inbox = f", {q['inbox']} in the inbox" if q.get("inbox") else ""
    lines = [f"Queue: {q['pending']} pending ({q['due_now']} due now, {q['waiting']} waiting{inbox}), "
             f"{q['processing']} processing, {q['failed']} failed"]
    if q["oldest_due_age_seconds"] is not None:
        lines.append(f"Oldest due row waits for {q['oldest_due_age_seconds']:.0f}s")
    h = data["history_24h"]
    lines.append(f"Last 24h: {h['success']} delivered, {h['retry']} retried, {h['failed']} failed"
                 + (f", {h['dry_run']} dry run" if h["dry_run"] else ""))
    skipped = {reason: count for reason, count in (data.get("skipped_24h") or {}).items() if count}
    if skipped:  # INDEXNOW_VERIFY
        lines.append("Not sent, not indexable (24h): " + ", ".join(f"{r} {n}" for r, n in skipped.items()))
    return lines


def engine_lines(data: dict[str, Any]) -> list[str]:
    """One line per engine with several engines or a budget; with one engine, a line only while it is paused."""
    engines = data.get("engines") or []
    if not (len(engines) > 1 or any(e["budget"] or e["paused_until"] for e in engines)):
        return []
    return [
        f"Engine {e['endpoint']}: {e['pending']} pending, {e['processing']} processing, {e['failed']} failed"
        + (f"; paused until {e['paused_until']} (HTTP {e['pause_status']})" if e["paused_until"] else "")
        + (f"; {e['budget']['used']}/{e['budget']['limit']} requests this minute" if e["budget"] else "")
        for e in engines
    ]


def check_lines(checks: list[dict[str, Any]]) -> list[str]:
    lines = []
    for check in checks:
        mark = "ok " if check["ok"] else ("ERR" if check["status"] == "error" else "!! ")
        attention = "Needs attention: " if check["status"] == "attention" else ""
        lines.append(f"[{mark}] {attention}{check['message']}"
                     + (f"  Fix: {check['fix']}" if check["fix"] and not check["ok"] else ""))
    return lines


@command("enqueue")
@click.argument("urls", nargs=-1, required=True)
@click.option("--delete", is_flag=True, help="Queue 'delete' instead of 'update'.")
@click.option("--at", "available_at", type=click.DateTime(), default=None,
              help="Wait until this UTC time (updates only).")
@friendly_errors
def enqueue_command(urls: tuple[str, ...], delete: bool, available_at: datetime | None) -> None:
    """Queue URLs by hand. All are checked first: one bad URL queues none."""
    state = get_state()
    for url in urls:
        try:
            check_url(url, state.settings.allowed_hosts, state.settings.strip_query_params)
        except InvalidURLError as exc:
            raise click.ClickException(f"{url}: {exc}") from None
    if not state.settings.enabled:
        raise click.ClickException("INDEXNOW_ENABLED is False: nothing queued")
    result = queue_module.enqueue_many(state, urls, "delete" if delete else "update", available_at)
    click.echo(f"Queued {result.queued} URL(s) for {'delete' if delete else 'update'}"
               + (f"; {result.unchanged} unchanged" if result.unchanged else ""))


@command("retry-failed")
@friendly_errors
def retry_failed_command() -> None:
    """Put every failed row back to pending."""
    count = queue_module.retry_failed(get_state())
    click.echo(f"{count} failed row(s) back to pending")


@command("init-db")
@friendly_errors
def init_db_command() -> None:
    """Create the extension's tables (only those missing); bring older ones up to date."""
    created = create_tables()
    click.echo(f"Created {', '.join(created)}" if created else "All tables already exist")
    for line in upgrade_tables(get_state()):
        click.echo(f"Upgraded {line}")
