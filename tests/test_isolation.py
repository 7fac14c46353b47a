"""The test suite's own guarantees: no internet, no real keys."""

import os
import socket

import pytest


def test_the_internet_is_out_of_reach() -> None:
    with pytest.raises(socket.gaierror, match="must not reach the internet"):
        socket.getaddrinfo("api.openai.com", 443)
    assert socket.getaddrinfo("127.0.0.1", 80)  # loopback servers still work


def test_real_keys_are_set_aside() -> None:
    assert not any(os.environ.get(k) for k in ("OPENAI_API_KEY", "SERPER_API_KEY", "SERPAPI_API_KEY"))
