"""``flask indexnow explain URL [--json]``: a thin command over :func:`flask_indexnow.explain.explain_url`."""

from __future__ import annotations

import json

import click

from ..explain import explain_url
from ..safetext import safe_text
from ..state import get_state
from .common import command, friendly_errors


@command("explain")
@click.argument("url")
@click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")
@friendly_errors
def explain_command(url: str, as_json: bool) -> None:
    """Tell the story of one URL: rules, queue row, history, ledger, pauses.

    Exit code 0 when the URL is known or would be accepted, 1 when it is refused.
    """
    found = explain_url(get_state(), url)
    refused = not found.accepted and not found.known
    if as_json:
        click.echo(json.dumps(found.as_dict(), indent=2, sort_keys=True))
        if refused:
            raise SystemExit(1)
        return
    if refused:
        raise click.ClickException(f"{safe_text(url, 300)} is refused: {found.refused_because}")
    click.echo(found.normalized or safe_text(url, 300))
    for line in found.story:
        click.echo(f"  {line}")
        if line.startswith("History:"):
            for answer in found.history:
                status = f"HTTP {answer['http_status']}" if answer["http_status"] is not None else "no answer"
                click.echo(
                    f"    {answer['at']:%Y-%m-%d %H:%M:%S} UTC  {answer['action']:<6} {answer['status']:<8} "
                    f"{status:<9} attempt {answer['attempt']}"
                    + (f"  {answer['error']}" if answer["error"] else "")
                )
