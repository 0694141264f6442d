"""A stand-in for DNS and routing, so tests can give a public-looking name any address.

``outbound.resolve`` is the one look-up outbound requests make; the fixture
replaces it with a table the test fills. Connections to :data:`PUBLIC` are
routed to 127.0.0.1 at the socket, the way the internet would route them to a
real host, so "a public address is fetched" can be proven on loopback. Only
the network is pretended: the address checks under test run unchanged, and
every look-up and connection is recorded.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from flask_indexnow import outbound

#: A public address (example.com's); connections to it are routed to the local server.
PUBLIC = "93.184.216.34"
PRIVATE_ANSWERS = {
    "loopback": ["127.0.0.1"],
    "metadata": ["169.254.169.254"],
    "ipv6 loopback": ["::1"],
    "mapped loopback": ["::ffff:127.0.0.1"],
    "private": ["10.0.0.5"],
    "mixed": [PUBLIC, "127.0.0.1"],
}


@dataclass
class Network:
    """Names → addresses for ``outbound.resolve``, and a record of every look-up and connection."""

    names: dict[str, list[list[str]]] = field(default_factory=dict)
    lookups: list[str] = field(default_factory=list)
    connected: list[str] = field(default_factory=list)

    def answer(self, name: str, *answers: list[str]) -> None:
        """Each look-up of ``name`` takes the next answer; the last one repeats (a rebinding name)."""
        self.names[name] = list(answers)

    def resolve(self, host: str, port: int) -> list[tuple[int, str]]:
        self.lookups.append(host)
        if host not in self.names:
            raise socket.gaierror(f"{host}: unknown to the test's resolver")
        answers = self.names[host]
        addresses = answers.pop(0) if len(answers) > 1 else answers[0]
        return [(socket.AF_INET6 if ":" in a else socket.AF_INET, a) for a in addresses]


@pytest.fixture(name="network")
def network_fixture(monkeypatch: pytest.MonkeyPatch) -> Iterator[Network]:
    """The pretend network; import ``network_fixture`` into a test module to use ``network``."""
    net = Network()
    monkeypatch.setattr(outbound, "resolve", net.resolve)
    real_connect = socket.socket.connect

    def connect(sock: socket.socket, address: Any) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            net.connected.append(address[0])
            if address[0] == PUBLIC:
                address = ("127.0.0.1", address[1])
        real_connect(sock, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    yield net
