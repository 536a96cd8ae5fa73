"""The annotation app's network edge: where it listens (loopback hosts, the token a public host
needs, the bound socket) and its HTTP guards (body size, request origin, error bodies; plain ASGI,
no FastAPI import).

>>> same_origin("http://127.0.0.1:8765", "127.0.0.1:8765"), same_origin("http://evil.example", "127.0.0.1:8765")
(True, False)
"""

from __future__ import annotations

import ipaddress
import json
import secrets
import socket
from collections.abc import Awaitable, Callable, Iterable, Mapping, MutableMapping
from typing import Annotated, Any
from urllib.parse import urlsplit

from nlibias.errors import ConfigError
from nlibias.schema.declared import Refuse, declared

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1", "[::1]")


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_name(header: str) -> str:
    """The host part of a ``Host`` header."""
    if header.startswith("["):
        return header.split("]")[0] + "]"
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


Token = Annotated[
    str,
    Refuse(  # its words never show the token: it is a secret
        lambda token: len(token) < 16, "must be at least 16 characters (or omit it to get a generated one)"
    ),
]
"""The app's access token: 16 characters or more (the server's settings and the serve command)."""


@declared
def check_bind(host: str, token: Token | None) -> str | None:
    """The token to use when serving on ``host``: ``token``, or for a host other than loopback a new one."""
    if is_loopback(host):
        return token
    return token or secrets.token_urlsafe(24)


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening socket on ``host``:``port`` (0: any free port); an unresolvable host or a port
    in use is refused."""
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


MAX_BODY_BYTES = 64 * 1024  # an answer is about 150 bytes
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})  # no Origin check; the only ones ``?token=`` opens

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class BodyLimit:
    """ASGI middleware: refuse a body over ``limit`` bytes with 413, reading at most ``limit`` bytes."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _header(scope, b"content-length")
        if declared is not None and not declared.isdigit():
            await _refuse(send, 400, "Content-Length is not a number")
            return
        if declared is not None and int(declared) > self.limit:
            await _refuse(send, 413, f"request body over {self.limit // 1024} kB")
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limit:
                await _refuse(send, 413, f"request body over {self.limit // 1024} kB")
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if sent:
                return await receive()  # waits for the disconnect, as the server's own would
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


def same_origin(url: str, host: str) -> bool:
    """Whether ``url`` (an ``Origin`` or ``Referer``) names the request's ``Host``; ``null`` is foreign."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    if parts.scheme not in ("http", "https") or not parts.netloc or not host:
        return False
    return parts.netloc.lower() == host.lower()


def foreign_origin(method: str, headers: Mapping[str, str]) -> str | None:
    """Why a state-changing request comes from another site (``Origin``, else ``Referer``), or None."""
    if method.upper() in SAFE_METHODS:
        return None
    host = headers.get("host", "")
    origin = headers.get("origin")
    if origin is not None:
        return None if same_origin(origin, host) else f"origin {origin[:100]} is not this server"
    referer = headers.get("referer")
    if referer is not None and not same_origin(referer, host):
        return "referer origin is not this server"
    return None


def error_details(errors: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Validation errors without the input they were about: where and what, never what was sent."""
    return [
        {"type": str(e.get("type", "")), "loc": _loc(e), "msg": str(e.get("msg", ""))[:200]} for e in errors
    ]


def _loc(error: Mapping[str, Any]) -> list[str | int]:
    """The error's location; an unexpected field's name is input, so it is not repeated."""
    loc = [part if isinstance(part, int) else str(part)[:64] for part in error.get("loc", ())]
    if error.get("type") == "extra_forbidden" and loc:
        loc[-1] = "(unexpected field)"
    return loc


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return bytes(value).decode("latin-1").strip()
    return None


async def _refuse(send: Send, status: int, detail: str) -> None:
    payload = json.dumps({"detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})
