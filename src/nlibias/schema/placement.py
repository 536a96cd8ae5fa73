"""Where models run, declared once: a device (:data:`Device`: ``device``, each of ``devices``,
``$NLIBIAS_DEVICE``, ``export lm-eval --device``) and a Ray address (:data:`RayAddress`: ``--ray``).
Each rule is one function (:func:`device_name`, :func:`ray_address`) that pydantic runs on a
declared field and a reader of an environment variable calls itself.

>>> device_name("cuda:1"), ray_address("ray://10.0.0.1:10001")
('cuda:1', 'ray://10.0.0.1:10001')
>>> device_name("cuda:-1")
Traceback (most recent call last):
ValueError: an unknown device (use cpu, cuda, cuda:N or mps; auto: the default)
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any
from urllib.parse import urlsplit

from nlibias.errors import ConfigError
from nlibias.schema.declared import Allowed

DEVICE_ENV = "NLIBIAS_DEVICE"
"""The environment variable of the default device (a refusal of its value names it)."""

_DEVICE_WORDS = "cpu, cuda, cuda:N or mps; auto: the default"
_RAY_WORDS = "local (a new local Ray instance), auto (the running cluster), HOST:PORT or ray://HOST:PORT"


def device_name(device: str) -> str:
    """``device`` if it names a device models are placed on (``auto``: the default one), spelt as
    torch spells it: no blank, no space, an index from 0 without leading zeros.

    >>> [device_name(d) for d in ("cpu", "cuda", "cuda:0", "mps", "auto")]
    ['cpu', 'cuda', 'cuda:0', 'mps', 'auto']
    >>> device_name("cpu ")
    Traceback (most recent call last):
    ValueError: a device with spaces (use cpu, cuda, cuda:N or mps; auto: the default)
    """
    kind, colon, index = device.partition(":")
    plain = kind in ("cpu", "mps", "auto", "cuda") and not colon
    indexed = kind == "cuda" and index.isascii() and index.isdigit() and str(int(index)) == index
    if plain or indexed:
        return device
    what = (
        "blank"
        if not device.strip()
        else "a device with spaces"
        if device != device.strip()
        else "an unknown device"
    )
    raise ValueError(f"{what} (use {_DEVICE_WORDS})")


def ray_address(address: str) -> str:
    """``address`` if Ray can connect to it: ``local``, ``auto``, or ``[ray://]HOST:PORT``.

    >>> ray_address("auto"), ray_address("10.0.0.1:6379"), ray_address("[::1]:6379")
    ('auto', '10.0.0.1:6379', '[::1]:6379')
    >>> ray_address("maybe")
    Traceback (most recent call last):
    ValueError: not a Ray address (use local (a new local Ray instance), auto (the running cluster), HOST:PORT or ray://HOST:PORT)
    """
    if address in ("local", "auto"):
        return address
    scheme, _, rest = address.rpartition("://")
    try:
        parts = urlsplit(f"//{rest}")
        port = parts.port
    except ValueError:  # a port that is no number from 0 to 65535
        port = None
    whole = parts.hostname and port and not (parts.path or parts.query or parts.fragment or parts.username)
    if scheme in ("", "ray") and whole and not any(c.isspace() for c in address):
        return address
    raise ValueError(f"not a Ray address (use {_RAY_WORDS})")


@dataclass(frozen=True)
class _Rule:
    """A value's own rule (``check``, raising ValueError in its words), run by pydantic after the
    type's; pydantic stays unimported until a value is checked."""

    check: Callable[[Any], Any]

    def __get_pydantic_core_schema__(self, source: Any, handler: Callable[[Any], Any]) -> Any:
        from pydantic_core import core_schema

        return core_schema.no_info_after_validator_function(self.check, handler(source))


Device = Annotated[str, _Rule(device_name), Allowed(_DEVICE_WORDS)]
"""A device: cpu, cuda, cuda:N, mps or auto (the default: a GPU when present, or $NLIBIAS_DEVICE)."""
RayAddress = Annotated[str, _Rule(ray_address), Allowed(_RAY_WORDS)]
"""Where Ray runs: local, auto, HOST:PORT or ray://HOST:PORT."""


def checked(rule: Callable[[str], str], value: str, parameter: str) -> str:
    """``value`` held to ``rule`` outside a declaration (an environment variable, a backend's
    argument), refused naming ``parameter``."""
    try:
        return rule(value)
    except ValueError as error:
        raise ConfigError(f"{{{parameter}}} is {value!r}, {error}", parameter=parameter) from None


def env_device() -> str | None:
    """``$NLIBIAS_DEVICE`` held to the device rule, None when unset, empty or ``auto``; read where
    a job starts, whether or not a model of the job reads it (refused: ``NLIBIAS_DEVICE is 'cuda:-1',
    an unknown device (use ...)``)."""
    value = os.environ.get(DEVICE_ENV, "")
    if value == "":
        return None
    chosen = checked(device_name, value, DEVICE_ENV)
    return None if chosen == "auto" else chosen
