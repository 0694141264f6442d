"""The key rules: which key a host's batch carries, where its key file lives, a fresh key, a rotation.

What a valid key is (:func:`flask_indexnow.config.key_problem`) lives with the settings it validates.
"""

from __future__ import annotations

import secrets

from ..config import Settings, key_problem


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
