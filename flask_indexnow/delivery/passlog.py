"""The log lines of a worker pass: one format, safe to print, enough to act on.

Every line about a batch names the host and the endpoint (also as the record
attributes ``indexnow_host`` and ``indexnow_endpoint``, for structured
handlers). A failure carries the start of the engine's answer, cut to
:data:`ANSWER_CHARS` characters and stripped of anything a terminal would
act on. A dry run says exactly what production would have sent. A 403 says
which key-file URL the engine was told to fetch and what to check there, and
hands the streak to :mod:`flask_indexnow.keys.forbidden`, which escalates once per streak.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from ..config import key_problem
from ..keys import forbidden
from ..keys.rules import key_for, key_location
from ..refusal import Refusal, advice
from ..safetext import safe_text
from ..state import Engine, IndexNowState
from .endpoint import Answer

logger = logging.getLogger(__name__)

#: Characters of an engine's answer a log line carries.
ANSWER_CHARS = 200
#: URLs a dry-run line lists before "… and N more".
DRY_RUN_URLS = 10
def _extra(endpoint: str, host: str | None) -> dict[str, Any]:
    return {"indexnow_host": host, "indexnow_endpoint": endpoint}


def url_list(urls: Sequence[str], shown: int = DRY_RUN_URLS) -> str:
    """``a, b, c … and 7 more``: readable however long the batch."""
    text = ", ".join(safe_text(url) for url in urls[:shown])
    if len(urls) > shown:
        text += f" … and {len(urls) - shown} more"
    return text


def dry_run(engine: Engine, host: str, urls: Sequence[str]) -> None:
    """INFO: the POST a dry run did not make (host, endpoint and the URLs)."""
    logger.info(
        "IndexNow dry run host=%s endpoint=%s count=%d (nothing sent) urls=%s",
        host, engine.endpoint, len(urls), url_list(urls), extra=_extra(engine.endpoint, host),
    )


def no_key(state: IndexNowState, host: str, count: int, error: str | None) -> None:
    """ERROR: a batch failed before any POST because its host has no usable key."""
    logger.error(
        "IndexNow: host=%s endpoint=%s: %d URLs failed: %s",
        host, state.settings.endpoint, count, safe_text(error, ANSWER_CHARS),
        extra=_extra(state.settings.endpoint, host),
    )


def answer(state: IndexNowState, engine: Engine, host: str, count: int, reply: Answer) -> None:
    """One line per POST to ``engine``; a 403 also counts toward its host's streak (and may escalate)."""
    streak = forbidden.note_answer(state, engine, host, reply)
    text = (
        f"IndexNow POST host={host} endpoint={engine.endpoint} count={count} "
        f"status={reply.http_status if reply.http_status is not None else '-'} duration={reply.duration:.3f}s"
    )
    if reply.error:
        text += f" error={safe_text(reply.error, ANSWER_CHARS)}"
    location = _key_location(state, host)
    if reply.http_status == 403:
        text += " | " + forbidden_advice(location, reply.refusal)
        if streak:
            text += f" (403 number {streak} in a row for {host})"
    level = logging.INFO if reply.outcome == "success" else logging.WARNING
    logger.log(level, "%s", text, extra=_extra(engine.endpoint, host))
    if streak and forbidden.escalate(state, engine, host, streak):
        logger.critical(
            "IndexNow: host=%s endpoint=%s: the engine refused the key %d times in a row (HTTP 403): "
            "nothing for %s is accepted until %s serves the key. %s",
            host, engine.endpoint, streak, host, location or "the key file",
            "Logged once per streak; a delivery the engine accepts ends the streak.",
            extra=_extra(engine.endpoint, host),
        )


def forbidden_advice(location: str | None, refusal: str | None = None) -> str:
    """What a 403 means and what to check, naming the key-file URL; ``refusal``: the reason the body gave."""
    return advice(None if refusal is None else Refusal(refusal, None), location)


def _key_location(state: IndexNowState, host: str) -> str | None:
    key = key_for(state.settings, host)
    if key is None or key_problem(key):
        return None
    return key_location(state.settings, host, key)
