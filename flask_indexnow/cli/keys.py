"""``flask indexnow key generate|rotate|check``: a new key, a rotation, and each host's key file as engines see it."""

from __future__ import annotations

import click
from flask.cli import AppGroup

from ..keys.keycheck import check_key_files
from ..keys.rules import generate_key, rotated_keys
from ..safetext import safe_text
from ..state import get_state
from .common import friendly_errors


@click.group("key", cls=AppGroup)
def key_group() -> None:
    """The IndexNow key."""


@key_group.command("generate")
def key_generate_command() -> None:
    """Print a new random key to put in INDEXNOW_KEY."""
    key = generate_key()
    click.echo(key)
    click.echo(f"# Set INDEXNOW_KEY = {key!r}; the extension then serves /{key}.txt.", err=True)


@key_group.command("rotate")
@friendly_errors
def key_rotate_command() -> None:
    """Print a fresh key and the two settings to write; changes no file.

    The old key stays served as INDEXNOW_PREVIOUS_KEYS (never submitted), so an
    engine still checking a submission made with it finds its key file.
    """
    settings = get_state().settings
    new_key, previous = rotated_keys(settings, generate_key())
    click.echo(f"INDEXNOW_KEY = {new_key!r}")
    click.echo(f"INDEXNOW_PREVIOUS_KEYS = {previous!r}")
    click.echo("# Write these two settings where your configuration lives and restart: the new key is "
               f"submitted from then on, /{new_key}.txt is served, and the old key files stay served. Nothing "
               "was changed by this command.", err=True)
    if settings.keys:
        click.echo("# INDEXNOW_KEYS (per-host keys) is not rotated by this command.", err=True)


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
