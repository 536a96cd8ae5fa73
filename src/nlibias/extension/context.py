"""What the stages of ``nlibias extend`` and their fingerprints need from the run: a Protocol that
:class:`~.pipeline.Pipeline` implements, so neither imports the pipeline that imports them."""

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
    """One extension run as its stages see it (``all_subtopics``: every subtopic of the source;
    ``subtopics``: those the run extends; ``templates_path``: None for derived templates only)."""

    config: ExtendConfig
    run_dir: Path
    factories: Factories
    progress: bool

    @property
    def all_subtopics(self) -> list[BBNLISubtopic]: ...

    @property
    def subtopics(self) -> list[BBNLISubtopic]: ...

    @property
    def cache(self) -> PredictionCache: ...

    def templates_path(self) -> Path | None: ...

    def judgements_path(self) -> Path: ...

    def card_config(self) -> dict[str, Any]: ...
