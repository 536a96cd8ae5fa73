"""``nlibias extend`` as a function, :func:`extend` (``nlibias.extend``): the run configuration (a
YAML file or the defaults, with the given settings on top), then the extension pipeline
(:mod:`nlibias.extension.pipeline`).

The settings are the command line's options under their parameter names; an unset one (``None``,
an empty list, ``False``) leaves the configuration's value:

>>> extend_config(None, top_k=5, classifiers=["fake:a"]).mlm.top_k
5
>>> extend_config(None, templates="none").templates.curated is None
True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nlibias.schema.arguments import checked, one_or_many

if TYPE_CHECKING:
    from nlibias.extension.config import ExtendConfig
    from nlibias.extension.pipeline import PipelineResult, StageReport


def extend_config(
    config: ExtendConfig | str | Path | None = None,
    *,
    out_dir: str | Path | None = None,
    source: str | Path | None = None,
    fill_model: str | None = None,
    top_k: int | None = None,
    classifiers: Sequence[str] = (),
    compare_fill: Sequence[str] = (),
    holdout: Sequence[str] = (),
    policy: str | None = None,
    subtopics: Sequence[str] = (),
    unvalidated: bool = False,
    judgements: str | Path | None = None,
    templates: str | Path | None = None,
    derive: bool | None = None,
    cache: str | Path | None = None,
    device: str | None = None,
) -> ExtendConfig:
    """``config`` (an :class:`ExtendConfig`, a YAML file, or None for the defaults) with the given
    settings on top, checked again; ``templates="none"`` turns the curated templates off."""
    from nlibias.extension.config import ExtendConfig, load_config, with_overrides

    if config is None:
        config = ExtendConfig()
    elif not isinstance(config, ExtendConfig):
        config = load_config(config)

    def text(value: str | Path | None) -> str | None:
        return None if value is None else str(value)

    overrides: dict[str, Any] = {
        "run_dir": text(out_dir),
        "source": text(source),
        "mlm.model": fill_model,
        "mlm.top_k": top_k,
        "filter.models": list(classifiers) or None,
        "filter.compare_fills": list(compare_fill) or None,
        "filter.holdout": list(holdout) or None,
        "filter.policy": policy,
        "subtopics": list(subtopics) or None,
        "validation.unvalidated": True if unvalidated else None,
        "validation.judgements": text(judgements),
        "templates.curated": text(templates),
        "templates.derive": derive,
        "cache": text(cache),
        "mlm.device": device,
        "filter.device": device,
    }
    config = with_overrides(config, overrides)
    if templates is not None and str(templates).lower() == "none":
        config = config.model_copy(
            update={"templates": config.templates.model_copy(update={"curated": None})}
        )
    return config


@checked(lazy={"ExtendConfig": "nlibias.extension.config", "StageReport": "nlibias.extension.pipeline"})
def extend(
    config: ExtendConfig | str | Path | None = None,
    *,
    out_dir: str | Path | None = None,
    source: str | Path | None = None,
    fill_model: str | None = None,
    top_k: int | None = None,
    classifiers: str | Sequence[str] = (),
    compare_fill: str | Sequence[str] = (),
    holdout: str | Sequence[str] = (),
    policy: str | None = None,
    subtopics: str | Sequence[str] = (),
    unvalidated: bool = False,
    judgements: str | Path | None = None,
    templates: str | Path | None = None,
    derive: bool | None = None,
    cache: str | Path | None = None,
    device: str | None = None,
    from_stage: str | None = None,
    until: str | None = None,
    force: bool = False,
    progress: bool = True,
    on_stage: Callable[[StageReport], None] | None = None,
) -> PipelineResult:
    """Extend BBNLI the BBNLI-next way (masks → masked → fill → filter → validate →
    counterfactual → export) into ``out_dir``; as ``nlibias extend``. ``config``: an
    ``ExtendConfig``, a YAML file or None (the defaults); the other settings go on top of it
    (:func:`extend_config`; ``fill_model``: a masked or causal LM, ``fake`` for a dry run;
    ``classifiers`` and ``holdout``: filter and held-out NLI models). A rerun resumes; the result's
    ``status`` is ``complete``, ``stopped`` (``until``) or ``awaiting_judgements``. ``on_stage`` is
    called with each stage's report as the stage finishes.

    >>> # nlibias.extend(out_dir="runs/next", fill_model="fake", classifiers=["fake:a"],
    >>> #                unvalidated=True).status"""
    from nlibias.extension.pipeline import run_pipeline

    settings = extend_config(
        config,
        out_dir=out_dir,
        source=source,
        fill_model=fill_model,
        top_k=top_k,
        classifiers=one_or_many(classifiers),
        compare_fill=one_or_many(compare_fill),
        holdout=one_or_many(holdout),
        policy=policy,
        subtopics=one_or_many(subtopics),
        unvalidated=unvalidated,
        judgements=judgements,
        templates=templates,
        derive=derive,
        cache=cache,
        device=device,
    )
    return run_pipeline(
        settings, from_stage=from_stage, until=until, progress=progress, on_stage=on_stage, force=force
    )
