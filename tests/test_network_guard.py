"""The test network guard refuses and records anything but loopback (see ``network_guard``)."""

from __future__ import annotations

import socket

import pytest
import requests

from . import network_guard
from .conftest import NOWHERE_ENDPOINT


def test_a_public_name_is_refused_before_any_lookup() -> None:
    with pytest.raises(requests.ConnectionError, match="network guard"):
        requests.get("https://api.indexnow.org/indexnow", timeout=5)
    assert network_guard.take_attempts() == ["api.indexnow.org:443"]


def test_a_public_address_is_refused_before_connecting() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock, pytest.raises(OSError, match="network guard"):
        sock.connect(("192.0.2.1", 80))
    assert network_guard.take_attempts() == ["192.0.2.1:80"]


@pytest.mark.parametrize("host", ["127.0.0.1", "::1", "localhost", "[::1]", "127.8.9.10"])
def test_loopback_is_allowed(host: str) -> None:
    assert network_guard.is_loopback(host)


def test_apps_without_an_endpoint_fixture_send_to_a_closed_loopback_port() -> None:
    assert network_guard.is_loopback(NOWHERE_ENDPOINT.split("/")[2].split(":")[0])
