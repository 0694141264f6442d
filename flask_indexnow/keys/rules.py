"""The key rules: what a valid key is, which key a host's batch carries, where its key file lives."""

from __future__ import annotations

import re
import secrets
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..config import Settings

_KEY_RE = re.compile(r"[A-Za-z0-9-]{8,128}")


def key_problem(key: Any) -> str | None:
    """Why ``key`` cannot be used as an IndexNow key, or None when it can."""
    if key is None or key == "":
        return "INDEXNOW_KEY is not set (run `flask indexnow key generate`)"
    if not isinstance(key, str) or not _KEY_RE.fullmatch(key):
        return "INDEXNOW_KEY must be 8-128 characters of a-z, A-Z, 0-9 and '-'"
    return None



def key_for(settings: Settings, host: str) -> str | None:
    """The key a batch for ``host`` carries: INDEXNOW_KEYS first, then INDEXNOW_KEY."""
    return settings.keys.get(host) or settings.key


def key_location(settings: Settings, host: str, key: str) -> str:
    """The keyLocation of ``host``'s key file: INDEXNOW_KEY_LOCATION's template, else the host's root."""
    template = settings.key_location or "https://{host}/{key}.txt"
    return template.replace("{host}", host).replace("{key}", key)


def generate_key() -> str:
    """A fresh IndexNow key: 32 hex characters (128 bits)."""
    return secrets.token_hex(16)


def rotated_keys(settings: Settings, new_key: str) -> tuple[str, list[str]]:
    """What to set after a rotation: INDEXNOW_KEY = ``new_key``, INDEXNOW_PREVIOUS_KEYS = the old ones.

    The old ones: the current key (when it is valid) first, then the previous
    keys already listed, each once. INDEXNOW_KEYS (per-host keys) are left as they are.
    """
    old = [k for k in (settings.key, *settings.previous_keys) if k and not key_problem(k) and k != new_key]
    return new_key, list(dict.fromkeys(old))
