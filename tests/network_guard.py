"""Keep every test on loopback: a name lookup or connection elsewhere is refused and recorded.

The product's default endpoint is a real search engine, so one test that forgets
to point the app at a local server would send real traffic (or, offline, a DNS
query). The guard refuses such attempts at the socket layer and remembers them;
the ``conftest`` fails the test that made one, even when the code under test
caught the error and carried on. Worker processes started by the tests install
it too.
"""

from __future__ import annotations

import ipaddress
import socket
from typing import Any

#: Attempts made since the last :func:`take_attempts`, as "host:port" strings.
_attempts: list[str] = []
_installed = False

_LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}


def is_loopback(host: object) -> bool:
    if host is None or host == "":
        return True  # a bind or lookup of "any", never a connection elsewhere
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    name = str(host).strip("[]").lower()
    if name in _LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(name.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


def _refuse(host: object, port: object) -> OSError:
    target = f"{host}:{port}"
    _attempts.append(target)
    return OSError(f"test network guard: {target} is not loopback; tests only talk to 127.0.0.1")


def install() -> None:
    """Patch ``socket`` so only loopback names and addresses can be reached (idempotent)."""
    global _installed
    if _installed:
        return
    _installed = True
    real_getaddrinfo = socket.getaddrinfo
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if not is_loopback(host):
            raise _refuse(host, port)
        return real_getaddrinfo(host, port, *args, **kwargs)

    def check(sock: socket.socket, address: Any) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and not is_loopback(address[0]):
            raise _refuse(address[0], address[1])

    def connect(self: socket.socket, address: Any) -> None:
        check(self, address)
        return real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        check(self, address)
        return real_connect_ex(self, address)

    socket.getaddrinfo = getaddrinfo  # type: ignore[assignment]
    socket.socket.connect = connect  # type: ignore[method-assign,assignment]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign,assignment]


def take_attempts() -> list[str]:
    """Return and forget the refused attempts recorded so far."""
    attempts = list(_attempts)
    _attempts.clear()
    return attempts
