"""``flask indexnow verify URL…``: a thin command over :func:`flask_indexnow.verify.verify_urls`."""

from __future__ import annotations

import json

import click

from ..safetext import safe_text
from ..state import get_state
from ..verify import MODES, verify_urls
from .common import command, friendly_errors


@command("verify")
@click.argument("urls", nargs=-1, required=True)
@click.option("--mode", type=click.Choice(MODES), default=None,
              help="app: ask the app itself (no network); http: a real GET. Default: INDEXNOW_VERIFY, else app.")
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
@friendly_errors
def verify_command(urls: tuple[str, ...], mode: str | None, as_json: bool) -> None:
    """Say for each URL whether engines would index its page; sends and queues nothing.

    One line per URL. Exit code 0 when every page is indexable, 1 otherwise.
    """
    verdicts = verify_urls(get_state(), list(urls), mode)
    if as_json:
        click.echo(json.dumps([v.as_dict() for v in verdicts], indent=2))
    else:
        for verdict in verdicts:
            click.echo(f"{safe_text(verdict.url, 300)}  {safe_text(str(verdict), 500)}")
    if not all(v.indexable for v in verdicts):
        raise SystemExit(1)
