"""The samples of a file built with one shared object per distinct string: samples repeat most of
their text (docs/benchmarks.md)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from nlibias.schema import Sample


class StringPool:
    """One shared object per distinct string value (like ``sys.intern``, freed with the samples):
    samples repeat most of their text, and sharing it holds a WQ-NLI sample in about a third of
    the memory (docs/benchmarks.md). Ids are unique and stay out of the pool."""

    def __init__(
        self,
        shared_fields: Sequence[str],
        provenance_keys: Collection[str] | None = None,
        *,
        share: bool = True,
    ) -> None:
        self._shared_fields = tuple(shared_fields)
        self._strings: dict[str, str] = {}
        self._share = share
        self._keys = None if provenance_keys is None else frozenset(provenance_keys)

    def value(self, value: Any) -> Any:
        """``value`` with every string in it (dict keys, list items, nested) shared."""
        if type(value) is str:
            return self._strings.setdefault(value, value)
        if type(value) is dict:
            share = self._strings.setdefault
            # Strings and numbers inline: a call per value made reading WQ-NLI 60% slower.
            return {
                share(k, k): share(v, v)
                if type(v) is str
                else (self.value(v) if type(v) in (dict, list) else v)
                for k, v in value.items()
            }
        if type(value) is list:
            return [self.value(v) for v in value]
        return value

    def sample(self, fields: Mapping[str, Any], provenance: dict[str, Any]) -> Sample:
        """The sample of checked ``fields`` (every core field), its text shared when the pool shares."""
        if self._keys is not None:
            provenance = {k: v for k, v in provenance.items() if k in self._keys}
        text = {name: fields[name] for name in self._shared_fields}
        if self._share:
            share = self._strings.setdefault  # inline, not a call to self.value per field (slower)
            text = {name: share(v, v) if type(v) is str else v for name, v in text.items()}
            provenance = self.value(provenance)
        return Sample(id=fields["id"], pair_key=fields["pair_key"], **text, provenance=provenance)
