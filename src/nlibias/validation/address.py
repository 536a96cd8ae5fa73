"""Where the validation app listens: loopback hosts, the token a public host needs, the bound socket."""

from __future__ import annotations

import ipaddress
import secrets
import socket

from nlibias.errors import ConfigError

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1", "[::1]")


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_name(header: str) -> str:
    """The host part of a ``Host`` header.

    >>> host_name("127.0.0.1:8765"), host_name("[::1]:80"), host_name("localhost")
    ('127.0.0.1', '[::1]', 'localhost')
    """
    if header.startswith("["):
        return header.split("]")[0] + "]"
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


def check_bind(host: str, token: str | None) -> str | None:
    """The token to use when serving on ``host``: ``token``, or for a host other than loopback a new one.

    >>> check_bind("127.0.0.1", None) is None
    True
    >>> len(check_bind("0.0.0.0", None) or "") > 20
    True
    """
    if token is not None and len(token) < 16:
        raise ConfigError(
            "{token} must be at least 16 characters (or omit it to get a generated one)", parameter="token"
        )
    if is_loopback(host):
        return token
    return token or secrets.token_urlsafe(24)


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening socket on ``host``:``port`` (0: any free port); an unresolvable host or a port
    in use is refused.

    >>> sock = bind_socket("127.0.0.1", 0); sock.getsockname()[1] > 0
    True
    >>> sock.close()
    """
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)[
            0
        ]
    except (socket.gaierror, UnicodeError) as exc:
        raise ConfigError(
            f"{{host}} {host!r} cannot be resolved to an address ({exc}); use an IP address such as 127.0.0.1 "
            "or a host name this machine resolves",
            parameter="host",
        ) from None
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise ConfigError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc} (choose another port, or 0 for any free one)",
            parameter="port",
        ) from None
    return sock


def bound_port(sock: socket.socket) -> int:
    """The port a bound socket listens on."""
    return int(sock.getsockname()[1])
