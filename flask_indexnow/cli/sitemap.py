"""``flask indexnow submit-sitemap`` (queue a sitemap's URLs) and ``flask indexnow sitemap`` (write the served one).

Thin commands over :mod:`flask_indexnow.sitemap` and :mod:`flask_indexnow.sitemap.files`.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from ..safetext import safe_text
from ..sitemap import SitemapResult, parse_since, submit_sitemap
from ..sitemap.files import write_sitemap_files
from ..state import get_state
from .common import command, friendly_errors

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


@command("submit-sitemap")
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


@command("sitemap")
@click.option("--host", default=None, metavar="HOST",
              help="The site whose sitemap to write (default: the host of INDEXNOW_BASE_URL, or the only allowed host).")
@click.option("--output", default="sitemap.xml", show_default=True, metavar="FILE",
              help="Where to write it (.xml, or .xml.gz compressed); parts of a large one go beside it as NAME-N.xml.")
@friendly_errors
def sitemap_command(host: str | None, output: str) -> None:
    """Write the sitemap the extension serves (INDEXNOW_SITEMAP_URL) to files, for a site of static files."""
    written = write_sitemap_files(get_state(), host, output)
    parts = f" in {len(written.files) - 1} parts and an index" if len(written.files) > 1 else ""
    click.echo(f"Wrote the sitemap of {written.host}: {written.count} URL(s){parts}")
    for path in written.files:
        click.echo(f"  {path}")
