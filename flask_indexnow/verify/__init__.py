"""Only indexable pages: ask for each page before it is sent (INDEXNOW_VERIFY).

``verdict`` (what a verdict says), ``page`` (judging one answer), ``fetch``
(asking the app in-process, or a real GET), ``robots`` (robots.txt per host),
``verifier`` (one URL's verdict), ``screen`` (the pass's step between the
claim and the POST). See docs/indexable.md.
"""

from __future__ import annotations

from ..errors import InvalidURLError
from ..state import IndexNowState, current_app_object
from ..urls import check_url
from .fetch import ENVIRON_KEY, user_agent
from .verdict import REASONS, Verdict
from .verifier import MODES, Verifier

__all__ = ["ENVIRON_KEY", "MODES", "REASONS", "Verdict", "Verifier", "user_agent", "verify_url", "verify_urls"]


def verify_urls(state: IndexNowState, urls: list[str], mode: str | None = None) -> list[Verdict]:
    """The verdict of each URL, in order; nothing is queued or sent.

    ``mode``: ``"app"`` or ``"http"``; None: INDEXNOW_VERIFY, or ``"app"`` when
    that is off (asking the app itself needs no network). A URL that could
    never be queued raises :class:`~flask_indexnow.InvalidURLError` naming why,
    before any page is asked for. Needs an application context (in or out of
    a request).
    """
    checked = []
    for url in urls:
        try:
            checked.append(check_url(url, state.settings.allowed_hosts).url)
        except InvalidURLError as exc:
            raise InvalidURLError(f"{url}: {exc}") from None
    with Verifier(state, current_app_object(), mode or state.settings.verify or "app") as verifier:
        return [verifier.verify(url) for url in checked]


def verify_url(state: IndexNowState, url: str, mode: str | None = None) -> Verdict:
    """:func:`verify_urls` for one URL."""
    return verify_urls(state, [url], mode)[0]
