"""Who an installed plug-in is (its entry point and distribution), for the messages that name it;
shared by the benchmark plug-ins (:mod:`nlibias.catalog.registry`) and the NLI backends
(:mod:`nlibias.models.registry`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class PluginOrigin:
    """An entry point of a plug-in group and the distribution declaring it."""

    name: str
    value: str
    distribution: str | None = None
    """``name version`` of the installed package (None when the entry point does not say)."""

    @classmethod
    def of(cls, entry: Any) -> PluginOrigin:
        dist = getattr(entry, "dist", None)
        metadata = getattr(dist, "metadata", None)
        name = (
            metadata["Name"] if metadata is not None and "Name" in metadata else getattr(dist, "name", None)
        )
        version = getattr(dist, "version", None)
        distribution = None if name is None else f"{name} {version}" if version else str(name)
        return cls(str(entry.name), str(getattr(entry, "value", "")), distribution)

    def describe(self) -> str:
        """``plug-in 'mine' (mine.bench:BENCHMARK, distribution nlibias-mine 1.0)``."""
        where = self.value + (f", distribution {self.distribution}" if self.distribution else "")
        return f"plug-in {self.name!r} ({where})"


def duplicate_names(entries: Iterable[Any]) -> dict[str, str]:
    """Entry-point name → why none of the entry points sharing it is loaded (two plug-ins of one
    name would shadow each other, whichever was found first winning silently)."""
    by_name: dict[str, list[PluginOrigin]] = {}
    for entry in entries:
        by_name.setdefault(str(entry.name), []).append(PluginOrigin.of(entry))
    return {
        name: f"two plug-ins are named {name!r}: "
        + " and ".join(o.describe() for o in origins)
        + "; neither is loaded: uninstall one of them"
        for name, origins in by_name.items()
        if len(origins) > 1
    }


def load_failure(origin: PluginOrigin, error: BaseException) -> str:
    """Why a plug-in is not registered, naming it and its distribution."""
    return f"entry point {origin.name!r} ({origin.value}) failed to load: {error}" + (
        f" (distribution {origin.distribution})" if origin.distribution else ""
    )
