"""What an engine's 403 says: a key it cannot find, a site it will not take, or "not verified yet".

Engines put the reason of a 403 in the body, as JSON (Bing and api.indexnow.org:
``{"errorCode": "SiteVerificationNotCompleted", "message": "..."}``) or as
plain text. Most reasons are permanent: the key file is missing or wrong, or
the key may not submit for that site, and sending again changes nothing. One
is not: right after a key goes live, the engine's own check of the key file is
still running and it answers ``SiteVerificationNotCompleted``. Failing every
URL for good then would throw away the site's first submissions, so that
reason is temporary: retried with INDEXNOW_RETRY_DELAY, the key still pending.

Pure functions of the body, no I/O: the endpoint client and the log lines both
read the same verdict.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

#: Wordings of "the engine has not finished verifying the key" (matched without case, spaces or punctuation).
_NOT_VERIFIED_YET = ("siteverificationnotcompleted", "verificationnotcompleted", "verificationisnotcompleted",
                     "verificationinprogress", "notverifiedyet", "verificationpending")
#: Wordings of "the key file was not found or does not hold the key".
_KEY_NOT_FOUND = ("keynotfound", "keynotvalid", "invalidkey", "keyfilenotfound", "keymismatch", "wrongkey")
#: Wordings of "this key may not submit URLs of this site" (Bing writes "Forbidded").
_SITE_FORBIDDEN = ("userforbiddedtoaccesssite", "userforbiddentoaccesssite", "forbiddentoaccesssite",
                   "unauthorizedtoaccessthesite", "userisunauthorized")
_NOT_LETTERS = re.compile(r"[^a-z]+")
#: Characters of a reason code kept (a code is a short identifier; the rest is the engine's prose).
_CODE_MAX = 60


@dataclass(frozen=True)
class Refusal:
    """The reason of one 403: its ``kind`` decides what happens and which hint is given.

    ``kind``: ``"not_verified_yet"`` (temporary), ``"key_not_found"``, ``"site_forbidden"`` or
    ``"other"`` (permanent). ``code``: the engine's own reason code when it gave one.
    """

    kind: str
    code: str | None

    @property
    def temporary(self) -> bool:
        return self.kind == "not_verified_yet"


def read_refusal(body: bytes) -> Refusal:
    """The reason a 403 body gives; ``"other"`` when it gives none that is known."""
    text = body.decode("utf-8", "replace")
    code = _json_code(text)
    squeezed = _NOT_LETTERS.sub("", text.lower())
    for kind, wordings in (("not_verified_yet", _NOT_VERIFIED_YET), ("key_not_found", _KEY_NOT_FOUND),
                           ("site_forbidden", _SITE_FORBIDDEN)):
        if any(w in squeezed for w in wordings):
            return Refusal(kind, code)
    return Refusal("other", code)


def _json_code(text: str) -> str | None:
    """``errorCode`` (or ``code``) of a JSON body, when it is a short identifier."""
    try:
        document = json.loads(text)
    except ValueError:
        return None
    if not isinstance(document, dict):
        return None
    for name in ("errorCode", "code", "error"):
        value = document.get(name)
        if isinstance(value, str) and 0 < len(value) <= _CODE_MAX and value.replace("_", "").isalnum():
            return value
    return None


def advice(refusal: Refusal | None, location: str | None) -> str:
    """What a 403 with this reason means and what to check, naming the key-file URL."""
    where = location or "the key file (no valid key is configured for this host)"
    if refusal is not None and refusal.temporary:
        return (f"the engine has not finished verifying the key yet (it fetches {where}): "
                "the URLs are retried after INDEXNOW_RETRY_DELAY and the key stays pending")
    check = (f"it fetches {where}; check that this URL answers "
             "200 with exactly the key as its content, reachable by a crawler: not blocked by robots.txt, "
             "a login, a firewall or bot protection, and not redirected")
    if refusal is not None and refusal.kind == "site_forbidden":
        return ("the engine has not accepted this key for this host: " + check + "; a key verified for another "
                "site does not count here, and the key file must be on the host of the URLs (or, with "
                "INDEXNOW_KEY_LOCATION, in a directory that holds them); after a key change, keep serving the "
                "old key (INDEXNOW_PREVIOUS_KEYS) until the engine has checked the new one")
    if refusal is not None and refusal.kind == "key_not_found":
        return "the engine did not find the key: " + check
    return "the engine could not verify the key: " + check
