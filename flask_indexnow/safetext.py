"""Remote text made safe to print on a terminal or a page.

Whatever a remote server sends (a ``Location`` header, an error body, a
``<loc>`` of a sitemap) may carry escape sequences: an OSC sequence changes a
terminal's title, CR/LF forge extra output lines, and bidi overrides (U+202E)
or zero-width characters make one text read as another. Every remote value the
CLI, the logs' stored errors and the status page show goes through
:func:`safe_text` first.
"""

from __future__ import annotations

import re

__all__ = ["safe_text"]


#: Control characters (C0, DEL, C1) and line/paragraph separators: they break or forge lines.
_BREAKING_RE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]+")
#: Format characters (Unicode category Cf: bidi overrides and isolates, zero-width spaces and
#: joiners, soft hyphen, BOM, tag characters …): invisible, yet they reorder or disguise what is shown.
_INVISIBLE_RE = re.compile(
    "[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]+"
)


def safe_text(text: object, limit: int | None = None) -> str:
    """``text`` as one printable line: controls become a space, format characters go.

    Runs of whitespace are collapsed, so CR/LF cannot start a forged line and
    an ``ESC ] 0 ; title BEL`` sequence is left as inert text. None gives "".
    With ``limit``, the text is cut to that many characters, the last one an ellipsis.
    """
    if text is None:
        return ""
    value = " ".join(_BREAKING_RE.sub(" ", _INVISIBLE_RE.sub("", str(text))).split())
    if limit is not None and len(value) > limit:
        value = value[: max(limit - 1, 1)] + "…"
    return value
