"""What the stages of ``nlibias extend`` and their fingerprints need from the run: a Protocol
(:class:`~.pipeline.Pipeline` implements it), so neither imports the pipeline that imports them.

>>> from nlibias.models.mlm.mask_filler import FakeMaskFiller
>>> Factories(filler=lambda s: FakeMaskFiller(s.model), classifier=print).filler.__name__
'<lambda>'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from nlibias.benchmarks.bbnli import BBNLISubtopic
from nlibias.extension.config import ExtendConfig, FilterConfig, FilterModelConfig, MLMConfig
from nlibias.models.base import NLIClassifier
from nlibias.models.mlm.mask_filler import MaskFiller
from nlibias.runtime.cache import PredictionCache


@dataclass(frozen=True)
class Factories:
    """How the pipeline builds its models (tests pass fakes)."""

    filler: Callable[[MLMConfig], MaskFiller]
    classifier: Callable[[FilterModelConfig, FilterConfig], NLIClassifier]


class StageContext(Protocol):
    """One extension run as its stages see it: configuration, run directory, inputs, models."""

    @property
    def config(self) -> ExtendConfig: ...

    @property
    def run_dir(self) -> Path: ...

    @property
    def factories(self) -> Factories: ...

    @property
    def progress(self) -> bool:
        """Whether the long stages show progress bars."""
        ...

    @property
    def all_subtopics(self) -> list[BBNLISubtopic]:
        """Every subtopic of the source (the masked templates may name any of them)."""
        ...

    @property
    def subtopics(self) -> list[BBNLISubtopic]:
        """The subtopics this run extends."""
        ...

    @property
    def cache(self) -> PredictionCache: ...

    def templates_path(self) -> Path | None:
        """The curated masked-template file (``None``: derived templates only)."""
        ...

    def judgements_path(self) -> Path:
        """Where the human judgements are read from."""
        ...

    def card_config(self) -> dict[str, Any]:
        """The configuration recorded in the dataset card's header."""
        ...
