"""Every request this process makes: a whole-request deadline, checked addresses, kept-alive connections.

Three paths talk to servers the site does not control: the POST to the
IndexNow endpoint, the download of a remote sitemap, and ``key check``. All go
through a :class:`OutboundSession` and run inside a :func:`scope`, which gives
them three guarantees the plain ``requests`` stack does not:

- **A whole-request deadline.** ``requests``' timeout applies to each socket
  read, so a server trickling one byte at a time holds a request forever. A
  scope has a monotonic deadline; one watchdog thread per process shuts the
  socket down when it passes, whatever the request is doing (connecting, the
  TLS handshake, waiting for the status line, reading headers or the body).
  The caller sees a failed read and :attr:`Scope.expired`.
- **The address connected to is the address checked.** The host name is
  resolved once (:data:`resolve`), every address it resolves to must be
  public (the rules of :func:`~flask_indexnow.urls.check_host`), and the socket
  connects to exactly that address: no second look-up, so DNS rebinding cannot
  slip a private address in between. The ``Host`` header, TLS SNI and
  certificate checks still use the name. ``allow_private`` opts out for local
  sandboxes and tests; a configured proxy is the owner's choice and is not
  checked (it resolves the target itself).
- **Keep-alive.** One session per app (:func:`app_session`) keeps its
  connections across POSTs and passes; proxy and CA settings are read from the
  environment once per session, ``~/.netrc`` never (no credentials to remote
  hosts).
"""

from __future__ import annotations

import heapq
import itertools
import os
import socket
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol
from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter
from requests.utils import get_environ_proxies
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import (
    ConnectTimeoutError,
    NameResolutionError,
    NewConnectionError,
)

from .errors import IndexNowError, InvalidURLError
from .urls import check_host

__all__ = [
    "OutboundSession",
    "RefusedAddressError",
    "Scope",
    "app_session",
    "new_http_session",
    "resolve",
    "scope",
]

USER_AGENT = "flask-indexnow"


class RefusedAddressError(IndexNowError):
    """A host name resolved to an address this process must not connect to."""


# --------------------------------------------------------------------------- resolving


def _getaddrinfo(host: str, port: int) -> list[tuple[int, str]]:
    """``(family, address)`` of every TCP address ``host`` resolves to, in the resolver's order."""
    found = socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM)
    return [(family, str(sockaddr[0])) for family, _type, _proto, _name, sockaddr in found]


#: The one DNS look-up of outbound requests: ``resolve(host, port) -> [(family, address), …]``.
#: A module attribute so tests can give names the addresses they need (no real DNS).
resolve: Callable[[str, int], list[tuple[int, str]]] = _getaddrinfo


def address_problem(address: str) -> str | None:
    """Why ``address`` (an IP literal) is no public address, or None when it is."""
    literal = f"[{address}]" if ":" in address else address
    try:
        check_host(literal)
    except InvalidURLError as exc:
        return str(exc)
    return None


def checked_addresses(host: str, port: int, allow_private: bool) -> list[tuple[int, str]]:
    """Resolve ``host`` once and return its addresses, refusing the name if any is not public.

    Any private address in the answer refuses the whole name (a mixed answer is
    how a rebinding attack hedges its bets).
    """
    addresses = resolve(host, port)
    if not addresses:
        raise socket.gaierror(f"{host} has no address")
    if not allow_private:
        for _family, address in addresses:
            problem = address_problem(address)
            if problem is not None:
                raise RefusedAddressError(f"{host} resolves to {address}, which is not a public address: refused")
    return addresses


# --------------------------------------------------------------------------- the deadline


class Scope:
    """One outbound request's rules: its deadline and whether private addresses are allowed.

    Sockets used inside the scope are attached to it; when the deadline passes
    the watchdog shuts them down and sets :attr:`expired`.
    """

    def __init__(self, deadline: float | None, allow_private: bool) -> None:
        self.deadline = deadline
        self.allow_private = allow_private
        self.expired = False
        self.closed = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()

    def remaining(self) -> float | None:
        """Seconds left (never negative), or None without a deadline."""
        if self.deadline is None:
            return None
        left = self.deadline - time.monotonic()
        if left <= 0:
            self.expired = True
            return 0.0
        return left

    def bound(self, timeout: float | None) -> float | None:
        """``timeout`` cut to the time left: the value for one socket operation."""
        left = self.remaining()
        if left is None:
            return timeout
        return left if timeout is None else min(timeout, left)

    def attach(self, sock: socket.socket | None) -> None:
        if sock is None:
            return
        with self._lock:
            if self.expired:
                _shutdown(sock)
            elif sock not in self._sockets:
                self._sockets.append(sock)

    def set_deadline(self, deadline: float | None) -> None:
        """Move the deadline (e.g. from "answer within the timeout" to "download within N s")."""
        with self._lock:
            self.deadline = deadline
        if deadline is not None:
            _watchdog.arm(self)

    def expire(self) -> None:
        """Called by the watchdog: shut every attached socket down, so blocked reads return now."""
        with self._lock:
            if self.closed or self.deadline is None or time.monotonic() < self.deadline:
                return
            self.expired = True
            for sock in self._sockets:
                _shutdown(sock)

    def close(self) -> None:
        with self._lock:
            self.closed = True
            self._sockets.clear()


def _shutdown(sock: socket.socket) -> None:
    try:
        socket.socket.shutdown(sock, socket.SHUT_RDWR)  # the fd itself, for TLS sockets too
    except OSError:
        pass  # already closed


class _Watchdog:
    """One daemon thread per process that expires scopes at their deadline."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int, weakref.ref[Scope]]] = []
        self._counter = itertools.count()
        self._thread: threading.Thread | None = None

    def arm(self, target: Scope) -> None:
        assert target.deadline is not None
        with self._cond:
            heapq.heappush(self._heap, (target.deadline, next(self._counter), weakref.ref(target)))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="indexnow-deadline", daemon=True)
                self._thread.start()
            self._cond.notify()

    def _run(self) -> None:
        with self._cond:
            while True:
                now = time.monotonic()
                due: list[Scope] = []
                while self._heap and self._heap[0][0] <= now:
                    target = heapq.heappop(self._heap)[2]()
                    if target is not None and not target.closed:
                        due.append(target)
                if due:
                    self._cond.release()
                    try:
                        for target in due:
                            target.expire()
                    finally:
                        self._cond.acquire()
                    continue
                self._cond.wait(self._heap[0][0] - now if self._heap else None)

    def _after_fork(self) -> None:
        self._cond = threading.Condition()
        self._heap = []
        self._thread = None


_watchdog = _Watchdog()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_watchdog._after_fork)

_current = threading.local()


def current_scope() -> Scope | None:
    return getattr(_current, "scope", None)


@contextmanager
def scope(deadline: float | None = None, *, allow_private: bool = False) -> Iterator[Scope]:
    """Run the outbound requests of the block under one deadline and one address policy.

    ``deadline`` is a :func:`time.monotonic` instant. Reading the response body
    belongs inside the block: the deadline covers it too.
    """
    outer = current_scope()
    current = Scope(deadline, allow_private)
    if deadline is not None:
        _watchdog.arm(current)
    _current.scope = current
    try:
        yield current
    finally:
        current.close()
        _current.scope = outer


# --------------------------------------------------------------------------- connections


def _connect(conn: HTTPConnection) -> socket.socket:
    """The socket for ``conn``: to a checked address of its host (or to its proxy)."""
    rules = current_scope() or Scope(None, False)
    timeout = rules.bound(conn.timeout if isinstance(conn.timeout, (int, float)) else None)
    if timeout == 0:
        raise ConnectTimeoutError(conn, f"Connection to {conn.host} timed out (deadline)")
    try:
        # A proxy is the owner's choice, not a remote one: it is used as configured.
        targets = checked_addresses(conn._dns_host, conn.port or 80, rules.allow_private or conn.proxy is not None)
    except OSError as exc:
        raise NameResolutionError(conn.host, conn, exc) from None  # type: ignore[arg-type]
    error: OSError | None = None
    for family, address in targets:
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            for option in conn.socket_options or ():
                sock.setsockopt(*option)
            sock.settimeout(timeout)
            if conn.source_address:
                sock.bind(conn.source_address)
            sock.connect((address, conn.port or 80))
            rules.attach(sock)  # the watchdog covers the TLS handshake that follows too
            return sock
        except TimeoutError:
            sock.close()
            raise ConnectTimeoutError(conn, f"Connection to {conn.host} timed out (connect timeout={timeout})") from None
        except OSError as exc:
            sock.close()
            error = exc
    raise NewConnectionError(conn, f"Failed to establish a new connection: {error}")


class _CheckedHTTPConnection(HTTPConnection):
    """A connection that connects through :func:`_connect` and carries the scope's rules.

    Also the first base of :class:`_CheckedHTTPSConnection`, whose ``super()``
    then reaches ``HTTPSConnection``.
    """

    def _new_conn(self) -> socket.socket:
        return _connect(self)

    def connect(self) -> None:
        super().connect()
        _attach(self)

    def request(self, *args: Any, **kwargs: Any) -> None:
        _attach(self)
        super().request(*args, **kwargs)


class _CheckedHTTPSConnection(_CheckedHTTPConnection, HTTPSConnection):
    pass


def _attach(conn: HTTPConnection) -> None:
    rules = current_scope()
    if rules is None or conn.sock is None:
        return
    left = rules.remaining()
    if left == 0:
        raise TimeoutError("the request's deadline has passed")
    rules.attach(conn.sock)


class _CheckedHTTPPool(HTTPConnectionPool):
    ConnectionCls = _CheckedHTTPConnection


class _CheckedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _CheckedHTTPSConnection


class CheckedAdapter(HTTPAdapter):
    """A ``requests`` adapter whose connections go to checked addresses under the scope's deadline."""

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _CheckedHTTPPool, "https": _CheckedHTTPSPool}

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> Any:
        manager = super().proxy_manager_for(proxy, **proxy_kwargs)
        manager.pool_classes_by_scheme = {"http": _CheckedHTTPPool, "https": _CheckedHTTPSPool}
        return manager


class OutboundSession(requests.Session):
    """A ``requests`` session for outbound requests: checked connections, environment read once.

    ``trust_env`` is off (so ``~/.netrc`` credentials are never sent to remote
    hosts); the proxy variables and ``REQUESTS_CA_BUNDLE``/``CURL_CA_BUNDLE``
    are read once, when the session is made.
    """

    def __init__(self) -> None:
        super().__init__()
        self.trust_env = False
        self.headers["User-Agent"] = USER_AGENT
        self.mount("http://", CheckedAdapter())
        self.mount("https://", CheckedAdapter())
        self._env_ca = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE") or None
        self._env_proxies: dict[str, dict[str, str]] = {}

    def _proxies_for(self, url: str) -> dict[str, str]:
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        found = self._env_proxies.get(origin)
        if found is None:
            found = get_environ_proxies(url)
            if len(self._env_proxies) < 256:
                self._env_proxies[origin] = found
        return found

    def merge_environment_settings(self, url: Any, proxies: Any, stream: Any, verify: Any, cert: Any) -> Any:
        """What ``requests`` does with ``trust_env``, from the snapshot (and without ``~/.netrc``)."""
        merged = {**self._proxies_for(url), **self.proxies, **(proxies or {})}
        verify = self.verify if verify is None else verify
        if verify is True and self._env_ca:  # the environment's bundle, unless one was set explicitly
            verify = self._env_ca
        return {
            "proxies": {name: value for name, value in merged.items() if value is not None},
            "stream": self.stream if stream is None else stream,
            "verify": verify,
            "cert": self.cert if cert is None else cert,
        }


def new_http_session() -> OutboundSession:
    """A session of its own, for a one-off command (``key check``, ``submit-sitemap``): close it after."""
    return OutboundSession()


def forget_session_after_fork(state: SessionHolder) -> None:
    """In a forked child: drop the parent's session unclosed (its kept-alive sockets are the
    parent's, and closing them here would close them there); the next POST makes a new one."""
    state.http = None


class SessionHolder(Protocol):
    """What keeps the app's session: the per-app state (which sits above this module)."""

    http: OutboundSession | None
    lock: threading.Lock


def app_session(state: SessionHolder) -> OutboundSession:
    """The app's one outbound session, made on first use and reused across POSTs and passes.

    Shared by the threads of a process (urllib3's pools are thread-safe); closed
    when the app's state is garbage collected or the process exits.
    """
    session: OutboundSession | None = state.http
    if session is None:
        with state.lock:
            session = state.http
            if session is None:
                session = OutboundSession()
                weakref.finalize(state, session.close)
                state.http = session
    return session
