"""``flask indexnow submit-sitemap`` and ``flask indexnow key check``: the site as engines see it.

Thin commands over :mod:`.sitemap` and :mod:`.keycheck`; registered by the
import at the end of :mod:`.cli`.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from .cli import friendly_errors, indexnow_group, key_group
from .keys.keycheck import check_key_files
from .safetext import safe_text
from .sitemap import SitemapResult, parse_since, submit_sitemap
from .state import get_state

#: Rejected URLs printed with their reason; the rest are counted.
SHOWN_REJECTED = 5


class _Progress:
    """A click progress bar on stderr, made once the total is known."""

    def __init__(self) -> None:
        self.bar: Any = None

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            self.bar = click.progressbar(
                length=total, label="Queueing", file=sys.stderr, show_pos=True
            )
            self.bar.__enter__()
        self.bar.update(done - self.bar.pos)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)


@indexnow_group.command("submit-sitemap")
@click.argument("source", metavar="PATH_OR_URL")
@click.option("--since", default=None, metavar="DATE",
              help="Only URLs whose lastmod is at or after DATE (YYYY-MM-DD or a W3C datetime; naive = UTC). "
                   "URLs without a readable lastmod are kept.")
@click.option("--allow-private-hosts", is_flag=True,
              help="Let a remote sitemap be fetched from a loopback or private address (local sandboxes).")
@friendly_errors
def submit_sitemap_command(source: str, since: str | None, allow_private_hosts: bool) -> None:
    """Queue every URL of a sitemap or sitemap index (a file, .gz or not, or an http(s) URL)."""
    progress = _Progress()
    try:
        result = submit_sitemap(get_state(), source, parse_since(since), progress=progress,
                                allow_private=allow_private_hosts)
    finally:
        progress.close()
    for line in summary_lines(result, since is not None):
        click.echo(line)


def summary_lines(result: SitemapResult, filtered: bool) -> list[str]:
    read = f"Read {result.sitemaps} sitemap(s): {result.found} URL(s)"
    if filtered:
        read += f", {result.older} older than --since left out, {result.undated} without a readable lastmod kept"
    elif result.bad_lastmod:
        read += f" ({result.bad_lastmod} with an unreadable lastmod)"
    lines = [read, f"Queued {result.queued}, unchanged {result.unchanged}, rejected {result.rejected_count}"]
    for url, reason in result.rejected[:SHOWN_REJECTED]:
        lines.append(f"  rejected {safe_text(url)[:200]}: {safe_text(reason)}")  # both from the sitemap
    if result.rejected_count > SHOWN_REJECTED:
        lines.append(f"  … and {result.rejected_count - SHOWN_REJECTED} more rejected")
    return lines


@key_group.command("check")
@click.option("--host", "hosts", multiple=True, metavar="HOST",
              help="Host to check (repeatable). Default: hosts of the queue, history, INDEXNOW_KEYS "
                   "and INDEXNOW_ALLOWED_HOSTS.")
@click.option("--allow-private-hosts", is_flag=True,
              help="Let key files be fetched from loopback or private addresses (local sandboxes). "
                   "Default: INDEXNOW_ALLOW_PRIVATE_ENDPOINT.")
@friendly_errors
def key_check_command(hosts: tuple[str, ...], allow_private_hosts: bool) -> None:
    """Fetch each host's key file as a search engine would and say what is wrong."""
    results = check_key_files(get_state(), hosts or None, allow_private=True if allow_private_hosts else None)
    if not results:
        raise click.ClickException(
            "no host to check: none in the queue, history, INDEXNOW_KEYS or INDEXNOW_ALLOWED_HOSTS; pass --host"
        )
    for result in results:
        if result.ok:
            click.echo(safe_text(f"[ok ] {result.host}: {result.url} serves the key"))
            continue
        where = f" ({result.url})" if result.url else ""
        for problem in result.problems:  # messages quote what the host sent: printed through safe_text
            click.echo(safe_text(f"[ERR] {result.host}{where}: {problem.message}"))
            click.echo("      " + safe_text(f"Fix: {problem.fix}"))
    failed = sum(1 for r in results if not r.ok)
    if failed:
        raise click.ClickException(f"{failed} of {len(results)} host(s) have a key file problem")
