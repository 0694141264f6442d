"""Judging one page's answer: status, ``X-Robots-Tag``, ``<meta name="robots">``, canonical.

Pure functions over what the page answered (:class:`PageAnswer`); the fetchers
in :mod:`.fetch` make the answer. Only the document's head is parsed, with the
standard library's tolerant :class:`html.parser.HTMLParser`: the bytes before
``<body`` (the body was read up to a cap already), so a large page costs one
search and a short parse.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import urljoin, urlsplit, urlunsplit

from ..errors import InvalidURLError
from ..safetext import safe_text
from ..urls import check_url
from .verdict import Verdict

#: ``<meta name=…>`` values that speak to the engines IndexNow feeds.
META_NAMES = frozenset({"robots", "bingbot", "yandex"})
#: ``X-Robots-Tag: <agent>: …`` agents that speak to them (a bare directive speaks to all).
HEADER_AGENTS = frozenset({"bingbot", "yandex"})
#: Directives that switch indexing off.
NOINDEX = frozenset({"noindex", "none"})
#: ``X-Robots-Tag`` directives written ``name: value``: their name is no user agent.
_VALUED_DIRECTIVES = frozenset({"max-snippet", "max-image-preview", "max-video-preview", "unavailable_after"})
_BODY_RE = re.compile(rb"<body[\s>/]", re.IGNORECASE)
#: What a head may hold that is not markup: comments, and the text of scripts, styles, titles, templates.
_HIDDEN_RE = re.compile(r"<!--.*?(?:-->|$)|<(script|style|title|template)\b.*?(?:</\1\s*>|$)",
                        re.IGNORECASE | re.DOTALL)
_TAG_RE = re.compile(r"<(?:meta|link)\b(?:[^>\"']|\"[^\"]*\"|'[^']*')*>", re.IGNORECASE)
_CHARSET_RE = re.compile(r"charset\s*=\s*[\"']?([A-Za-z0-9._:-]+)", re.IGNORECASE)
_LINK_RE = re.compile(r"<([^>]*)>\s*((?:;\s*[^,;]+)*)")


@dataclass(frozen=True)
class PageAnswer:
    """What a GET of the page gave: the status, the headers (name, value), the start of the body."""

    status: int
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""

    def header(self, name: str) -> list[str]:
        lowered = name.lower()
        return [value for key, value in self.headers if key.lower() == lowered]


def judge(url: str, answer: PageAnswer) -> Verdict:
    """The verdict for ``url`` from its answer (robots.txt is :mod:`.robots`' question)."""
    status = answer.status
    if 300 <= status < 400:
        location = (answer.header("Location") or [""])[0].strip()
        target = f" to {_shown(_join(url, location) or location)}" if location else " without a Location"
        return Verdict(url, "redirect", f"HTTP {status}{target}")
    if status in (404, 410):
        return Verdict(url, "gone", f"HTTP {status}")
    if status >= 500 or status == 429:
        return Verdict(url, "error", f"the page answered HTTP {status}")
    if status >= 400:  # engines treat every other 4xx as they treat a 404 (nothing to index)
        return Verdict(url, "gone", f"HTTP {status}")
    if status < 200:
        return Verdict(url, "error", f"the page answered HTTP {status}")
    if header_noindex(answer.header("X-Robots-Tag")):
        return Verdict(url, "noindex", "X-Robots-Tag")
    canonical = _link_header_canonical(answer.header("Link"))
    if _is_html(answer):
        head = read_head(answer.body, _charset(answer))
        if head.noindex_by:
            return Verdict(url, "noindex", f"meta {head.noindex_by}")
        canonical = canonical or head.canonical
    if canonical:
        resolved = _join(url, canonical)
        if resolved is None or not same_url(url, resolved):  # (a link no parser can read names no page of ours)
            return Verdict(url, "canonical", _shown(resolved or canonical))
    return Verdict(url, "indexable")


#: Characters of a URL the page named (Location, canonical) a verdict's detail carries.
SHOWN_URL_CHARS = 500


def _join(base: str, ref: str) -> str | None:
    """``ref`` resolved against ``base``; None when it is no URL at all (``http://[oops``)."""
    try:
        joined = urljoin(base, ref)
        urlsplit(joined).port  # noqa: B018 - raises for a port that is no number
        return joined
    except ValueError:
        return None


def _shown(url: str) -> str:
    """A URL the page named, fit for the history and a terminal (what the site wrote is not trusted)."""
    return safe_text(url, SHOWN_URL_CHARS)


def header_noindex(values: Iterable[str]) -> bool:
    """Whether ``X-Robots-Tag`` values switch indexing off for every agent or one of :data:`HEADER_AGENTS`.

    ``googlebot: noindex`` speaks to another engine's crawler only: it does not count.
    An agent prefix applies to the directives after it in the same header value.
    """
    for value in values:
        agent: str | None = None
        for part in value.split(","):
            token = part.strip().lower()
            name, colon, rest = token.partition(":")
            name = name.strip()
            if colon and name not in _VALUED_DIRECTIVES and name and " " not in name:
                agent, token = name, rest.strip()
            if token in NOINDEX and (agent is None or agent in HEADER_AGENTS):
                return True
    return False


def meta_noindex(content: str) -> bool:
    """Whether a robots meta ``content`` holds ``noindex`` or ``none``."""
    return any(token.strip().lower() in NOINDEX for token in content.split(","))


@dataclass
class Head:
    """What the head says: the meta name that switched indexing off (or None), the canonical href."""

    noindex_by: str | None = None
    canonical: str | None = None


class _HeadParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.head = Head()
        self.done = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.done:
            return
        if tag == "body":
            self.done = True
            return
        values = {name.lower(): (value or "") for name, value in attrs}
        if tag == "meta":
            name = values.get("name", "").strip().lower()
            if name in META_NAMES and self.head.noindex_by is None and meta_noindex(values.get("content", "")):
                self.head.noindex_by = name
        elif tag == "link" and self.head.canonical is None:
            if "canonical" in values.get("rel", "").lower().split() and values.get("href", "").strip():
                self.head.canonical = values["href"].strip()

    def handle_endtag(self, tag: str) -> None:
        if tag == "head":
            self.done = True


def read_head(body: bytes, charset: str = "utf-8") -> Head:
    """The robots metas and the canonical link of an HTML document's head (the bytes before ``<body``).

    Comments, scripts and styles are cut out first (a ``<meta>`` written in
    them is no tag), then only the ``<meta>`` and ``<link>`` tags go through
    the parser: the same answer as parsing the whole head, at a fraction of
    the cost.
    """
    found = _BODY_RE.search(body)
    head = body if found is None else body[: found.start()]
    try:
        text = head.decode(charset, errors="replace")
    except LookupError:  # an unknown charset name
        text = head.decode("utf-8", errors="replace")
    text = _HIDDEN_RE.sub(" ", text)
    parser = _HeadParser()
    try:
        parser.feed("".join(_TAG_RE.findall(text)))
        parser.close()
    except Exception:  # noqa: BLE001 - a page's broken markup says nothing about its indexing
        pass
    return parser.head


def same_url(page: str, other: str) -> bool:
    """Whether two URLs name the same page, in the queue's normal form (fragment ignored)."""
    return _normal(page) == _normal(other)


def _normal(url: str) -> str:
    try:
        url = check_url(url).url
    except (InvalidURLError, ValueError):  # not a submittable URL: compare its plain parts
        url = url.strip()
    parts = urlsplit(url)
    scheme, netloc = parts.scheme.lower(), parts.netloc.lower()
    if netloc.endswith({"http": ":80", "https": ":443"}.get(scheme, "\0")):  # the default port says nothing
        netloc = netloc.rsplit(":", 1)[0]
    return urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))


def _is_html(answer: PageAnswer) -> bool:
    kind = (answer.header("Content-Type") or ["text/html"])[0].split(";")[0].strip().lower()
    return kind in ("text/html", "application/xhtml+xml", "")


def _charset(answer: PageAnswer) -> str:
    found = _CHARSET_RE.search((answer.header("Content-Type") or [""])[0])
    return found.group(1) if found else "utf-8"


def _link_header_canonical(values: Iterable[str]) -> str | None:
    """The target of a ``Link: <…>; rel="canonical"`` header, if any."""
    for value in values:
        for target, params in _LINK_RE.findall(value):
            for param in params.split(";"):
                name, _, rel = param.partition("=")
                if name.strip().lower() == "rel" and "canonical" in rel.strip().strip("\"'").lower().split():
                    return str(target).strip()
    return None
