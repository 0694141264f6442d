"""A key file's directory is the scope of the key.

The protocol: a key file that is not at the host's root "can contain only pages
located in the same directory as the key" (indexnow.org, Yandex). With
``INDEXNOW_KEY_LOCATION = "https://{host}/blog/{key}.txt"`` an engine refuses a
batch that carries ``https://www.example.com/shop/item``, and the whole batch is
lost. So such a URL is refused at enqueue, like a URL of a foreign host, with a
message naming INDEXNOW_KEY_LOCATION.

The rule applies when the key file is on the URL's own host (the template's
host is ``{host}``, or the URL's host written out) and not at its root. A key
file on another host is the owner's choice the protocol does not describe; it
is left alone here (``flask indexnow key check`` reads it).

Cheap by design: nothing at all without INDEXNOW_KEY_LOCATION, and otherwise
one template reading per host and a prefix test per URL.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from ..config import key_problem
from ..errors import InvalidURLError
from .rules import key_for, key_location

if TYPE_CHECKING:
    from ..config import Settings


def key_directory(settings: Settings, host: str) -> tuple[str, str] | None:
    """(the key file's URL, its directory path ending in "/") when the key's scope is narrower than ``host``.

    None when every URL of ``host`` may be sent: no INDEXNOW_KEY_LOCATION, a key
    file at the root, on another host, or no valid key to build its URL from.
    """
    if settings.key_location is None:
        return None
    key = key_for(settings, host)
    if key is None or key_problem(key):
        return None
    location = key_location(settings, host, key)
    try:
        parts = urlsplit(location)
        location_host = (parts.hostname or "").rstrip(".")
    except ValueError:
        return None
    if location_host != host:
        return None
    directory = parts.path[: parts.path.rfind("/") + 1] or "/"
    if directory == "/":
        return None
    return location, directory


def path_of(url: str) -> str:
    """The path (and query) of a normalised ``scheme://host[:port]/path`` URL, without parsing it again."""
    rest = url.partition("://")[2]
    slash = rest.find("/")
    return rest[slash:] if slash >= 0 else "/"


def scope_problem(settings: Settings, host: str, url: str) -> str | None:
    """Why ``url`` (normalised, of ``host``) is outside its key's scope, or None when it may be sent."""
    scope = key_directory(settings, host)
    if scope is None:
        return None
    location, directory = scope
    if path_of(url).startswith(directory):
        return None
    return (f"URL is outside the directory of its key file {location} (INDEXNOW_KEY_LOCATION): "
            f"with that key only URLs under {directory} can be submitted")


def check_scope(settings: Settings, host: str, url: str) -> None:
    """Raise :class:`InvalidURLError` when ``url`` is outside its key's scope."""
    problem = scope_problem(settings, host, url)
    if problem is not None:
        raise InvalidURLError(problem)


def split_by_scope(
    settings: Settings, urls: list[str], hosts: list[str]
) -> tuple[list[str], list[str], list[tuple[str, str]]]:
    """``urls`` (with their ``hosts``) parted into those in scope and the refused ``(url, reason)``."""
    if settings.key_location is None:
        return urls, hosts, []
    scopes: dict[str, tuple[str, str] | None] = {}
    good: list[str] = []
    good_hosts: list[str] = []
    refused: list[tuple[str, str]] = []
    for url, host in zip(urls, hosts):
        if host not in scopes:
            scopes[host] = key_directory(settings, host)
        scope = scopes[host]
        if scope is None or path_of(url).startswith(scope[1]):
            good.append(url)
            good_hosts.append(host)
        else:
            refused.append((url, scope_problem(settings, host, url) or ""))
    return good, good_hosts, refused


def template_directory(settings: Settings) -> str | None:
    """The directory INDEXNOW_KEY_LOCATION puts the key file in on each ``{host}``, when not the root; else None."""
    template = settings.key_location
    if template is None:
        return None
    try:
        parts = urlsplit(template)
    except ValueError:
        return None
    if parts.netloc != "{host}":
        return None
    directory = parts.path[: parts.path.rfind("/") + 1] or "/"
    return None if directory == "/" else directory
