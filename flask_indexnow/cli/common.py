"""What every command shares: one clear line for a user's mistake, and the app context.

A user's mistake (a bad URL, a bad option, missing tables) prints one clear
line and exits 1; no traceback.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import click
import sqlalchemy as sa
from flask.cli import with_appcontext

from ..errors import IndexNowError
from ..missing import is_missing_column, is_missing_table, missing_tables_message, outdated_tables_message
from ..safetext import safe_text
from ..sqlutil import error_text
from ..state import get_state

F = TypeVar("F", bound=Callable[..., Any])


def command(name: str) -> Callable[[Callable[..., Any]], click.Command]:
    """A click command that runs in the app's context (what ``AppGroup.command`` makes)."""

    def decorator(fn: Callable[..., Any]) -> click.Command:
        return click.command(name)(with_appcontext(fn))

    return decorator


def friendly_errors(fn: F) -> F:
    """Turn expected failures into one line and exit code 1."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (click.ClickException, click.exceptions.Exit):  # Exit is a RuntimeError: a chosen exit status
            raise
        except (IndexNowError, ValueError, RuntimeError) as exc:
            raise click.ClickException(safe_text(str(exc))) from None  # may quote remote text
        except sa.exc.SQLAlchemyError as exc:
            if is_missing_table(exc):
                raise click.ClickException(missing_tables_message(get_state().prefix)) from None
            if is_missing_column(exc):
                raise click.ClickException(outdated_tables_message(get_state().prefix)) from None
            detail = error_text(exc)
            raise click.ClickException(
                f"database error: {detail} (are the tables created? run `flask indexnow init-db`)"
            ) from None

    return wrapper  # type: ignore[return-value]
