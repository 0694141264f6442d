"""Refusing cross-site requests to the status page's buttons.

Two independent checks, both needed for a POST to pass:

1. Where the request comes from. ``Sec-Fetch-Site`` (sent by every current
   browser) must be ``same-origin``; an ``Origin`` header, else a ``Referer``,
   must name this very origin. A browser never lets a page forge these.
2. A token bound to the session: a random secret kept in the app's signed
   session, handed to the page signed and timestamped by ``itsdangerous``
   (which Flask's own sessions use), and compared in constant time.

This is the double-submit pattern of Flask-WTF's ``generate_csrf`` /
``validate_csrf``, kept to this blueprint: Flask-WTF's ``CSRFProtect`` is
app-wide, and an extension must not start refusing the host app's own forms.
When the host app runs ``CSRFProtect`` itself, it checks every POST before
any view, so the buttons' forms carry its token as well (:func:`host_field`):
both protections then hold, and neither field is named like the other. A host
with a scheme of its own (a ``nonce`` field checked in ``before_request``, say)
registers ``@indexnow.status_form_fields``, whose fields every form carries
too (:func:`extra_fields`).
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Mapping
from urllib.parse import urlsplit

from flask import current_app, g, request, session
from itsdangerous import BadData, URLSafeTimedSerializer

SESSION_KEY = "_indexnow_csrf"
#: Not "…csrf_token": Flask-WTF's CSRFProtect reads any form field ending so as its own.
FIELD = "indexnow_csrf"
HEADER = "X-IndexNow-CSRF-Token"
SALT = "flask-indexnow-csrf"
#: A page left open longer than this must be reloaded before its buttons work.
MAX_AGE = 12 * 3600
#: Fetch-metadata values a same-origin form post may carry ("none": typed by the user).
ALLOWED_FETCH_SITES = ("same-origin", "none")
_DEFAULT_PORTS = {"http": "80", "https": "443"}


class CSRFError(Exception):
    """A state-changing request that must be refused; ``status`` is 400 or 403."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def available() -> bool:
    """Tokens need the app's session, and the session needs SECRET_KEY."""
    return bool(current_app.secret_key)


def _serializer() -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(current_app.secret_key, salt=SALT)  # type: ignore[arg-type]


def generate_token() -> str | None:
    """The token for this page's forms (None without SECRET_KEY); one per request."""
    if not available():
        return None
    token: str | None = g.get("_indexnow_csrf_token")
    if token is None:
        raw = session.get(SESSION_KEY)
        if not isinstance(raw, str) or len(raw) != 64:
            raw = secrets.token_hex(32)
            session[SESSION_KEY] = raw
        token = _serializer().dumps(raw)
        g._indexnow_csrf_token = token
    return token


def host_field() -> tuple[str, str] | None:
    """The host app's own CSRF form field (name, token) when Flask-WTF's ``CSRFProtect`` guards the app.

    ``CSRFProtect`` registers itself as ``app.extensions["csrf"]`` and refuses a
    POST without its token before the status page's view runs. Exempting the
    blueprint instead would switch off a protection the site owner chose.
    """
    if "csrf" not in current_app.extensions or not current_app.config.get("WTF_CSRF_ENABLED", True):
        return None
    try:  # Flask-WTF is the host's dependency, not ours
        from flask_wtf.csrf import generate_csrf
    except ImportError:
        return None
    return current_app.config.get("WTF_CSRF_FIELD_NAME", "csrf_token"), generate_csrf()


def extra_fields() -> list[tuple[str, str]]:
    """The hidden fields the host's ``@indexnow.status_form_fields`` function asks every form to carry.

    Called once per page view, in the request, so a per-session value (the
    host's nonce) is read as the host's own templates would read it. A return
    value of the wrong shape is the host developer's mistake: a TypeError that
    says what was expected, rather than a form that silently lacks the field.
    """
    extension = current_app.extensions["indexnow"].extension
    callback = extension.status_form_fields_callback
    if callback is None:
        return []
    fields = callback()
    if fields is None:
        return []
    if not isinstance(fields, Mapping):
        raise TypeError("@indexnow.status_form_fields must return a dict of hidden field name -> string value, "
                        f"got {type(fields).__name__}")
    pairs: list[tuple[str, str]] = []
    for name, value in fields.items():
        if not isinstance(name, str) or not name or not isinstance(value, str):
            raise TypeError("@indexnow.status_form_fields must return a dict of hidden field name -> string "
                            f"value, got the item {name!r}: {value!r}")
        if name == FIELD:
            raise TypeError(f"@indexnow.status_form_fields cannot set {FIELD!r}: the status page's own field")
        pairs.append((name, value))
    return pairs


def protect() -> None:
    """Raise :class:`CSRFError` unless this POST comes from the status page itself."""
    check_origin()
    check_token()


def _normalise(scheme: str, netloc: str) -> str:
    """``scheme://host[:port]`` in lower case, without user info or a default port."""
    scheme = scheme.lower()
    netloc = netloc.rsplit("@", 1)[-1].lower()
    host, sep, port = netloc.rpartition(":")
    if not (sep and port.isdigit()):
        host, port = netloc, ""
    if port and port != _DEFAULT_PORTS.get(scheme):
        return f"{scheme}://{host}:{port}"
    return f"{scheme}://{host}"


def own_origin() -> str:
    return _normalise(request.scheme, request.host)


def origin_of(url: str) -> str | None:
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if not parts.scheme or not parts.netloc:
        return None
    return _normalise(parts.scheme, parts.netloc)


def check_origin() -> None:
    fetch_site = request.headers.get("Sec-Fetch-Site")
    if fetch_site is not None and fetch_site.strip().lower() not in ALLOWED_FETCH_SITES:
        raise CSRFError(403, f"Cross-site request refused (Sec-Fetch-Site: {fetch_site[:40]}).")
    expected = own_origin()
    origin = request.headers.get("Origin")
    if origin is not None:
        if origin_of(origin.strip()) != expected:
            raise CSRFError(403, _mismatch("Origin", origin, expected))
        return
    referer = request.headers.get("Referer")
    if referer is not None and origin_of(referer.strip()) != expected:
        raise CSRFError(403, _mismatch("Referer", referer, expected))


def _mismatch(header: str, value: str, expected: str) -> str:
    shown = value if len(value) <= 100 else value[:99] + "…"
    return (f"Cross-site request refused: the {header} header ({shown}) is not this site ({expected}). "
            "Behind a proxy, apply werkzeug's ProxyFix so the app sees the public scheme and host.")


def check_token() -> None:
    if not available():
        raise CSRFError(400, "SECRET_KEY is not set, so the status page's buttons cannot be protected; set it.")
    token = request.form.get(FIELD) or request.headers.get(HEADER)
    if not token:
        raise CSRFError(400, "The form's security token is missing: reload the status page and try again.")
    try:
        signed = _serializer().loads(token, max_age=MAX_AGE)
    except BadData:
        raise CSRFError(400, "The form's security token is invalid or expired: reload the status page "
                             "and try again.") from None
    raw = session.get(SESSION_KEY)
    if not isinstance(raw, str) or not isinstance(signed, str) or not hmac.compare_digest(raw, signed):
        raise CSRFError(400, "The form's security token does not belong to this session: reload the "
                             "status page and try again.")
