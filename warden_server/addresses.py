"""Which host names and addresses are this machine's own (loopback): where serving without a token is allowed."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_header_is_loopback(host_header: str) -> bool:
    """A ``Host`` header naming a loopback address (``127.0.0.1:4111``, ``[::1]:4111``, ``localhost``):
    a page served without a token refuses other names, so a site whose name was re-pointed at
    127.0.0.1 (DNS rebinding) cannot drive it from the victim's browser."""
    try:
        name = urlsplit("//" + host_header).hostname
    except ValueError:
        return False
    return name is not None and is_loopback(name)


__all__ = ["host_header_is_loopback", "is_loopback"]
