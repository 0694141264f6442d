"""What verification says about one URL, and what the pass does with it.

The reasons are the rows of the table in docs/indexable.md: ``indexable`` and
``gone`` are sent, ``noindex``, ``canonical``, ``redirect`` and ``robots`` are
not (history ``skipped``), ``error`` is temporary (retried like a failed POST).
"""

from __future__ import annotations

from dataclasses import dataclass

#: Every reason a verdict can give, in the order of the docs' table.
REASONS = ("indexable", "noindex", "canonical", "redirect", "robots", "gone", "error")
#: The verdicts whose URL is sent (a 404/410 too: engines learn from it that the page is gone).
SENT = frozenset({"indexable", "gone"})
#: The verdicts whose URL is not sent: it leaves the queue with a ``skipped`` history row.
SKIPPED = ("noindex", "canonical", "redirect", "robots")


@dataclass(frozen=True)
class Verdict:
    """The answer of :func:`flask_indexnow.verify.verify_url` for one URL.

    ``indexable`` is True for the ``indexable`` reason only (a ``gone`` page is
    sent, but it is not indexable); ``detail`` says what the page answered, in
    words (``"meta robots"``, the canonical URL, ``"HTTP 301 to …"``).
    """

    url: str
    reason: str
    detail: str = ""

    @property
    def indexable(self) -> bool:
        return self.reason == "indexable"

    @property
    def sent(self) -> bool:
        """Whether a pass sends the URL (indexable, or gone)."""
        return self.reason in SENT

    @property
    def temporary(self) -> bool:
        """Whether the page could not be judged now (5xx, timeout, an exception): retried later."""
        return self.reason == "error"

    def __str__(self) -> str:
        """``"<reason>: <detail>"``, the form history rows and ``last_error`` carry."""
        return f"{self.reason}: {self.detail}" if self.detail else self.reason

    def as_dict(self) -> dict[str, object]:
        return {"url": self.url, "indexable": self.indexable, "reason": self.reason, "detail": self.detail}
