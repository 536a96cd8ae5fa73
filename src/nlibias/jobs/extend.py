"""``nlibias extend`` as a function: the run configuration (a YAML file or the defaults) with the
settings on top (an unset one, ``None``, ``[]`` or ``False``, leaves it), then the pipeline.

>>> extend_config(None, top_k=5, classifiers=["fake:a"]).mlm.top_k
5
>>> extend_config(None, templates="none", derive=True).templates.curated is None
True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path, PurePath
from typing import Any

from typing_extensions import TypedDict, Unpack

from nlibias.errors import ConfigError
from nlibias.extension.config import ExtendConfig, dump_config, load_config
from nlibias.extension.config_overrides import SETTING_KEYS, as_the_files, with_overrides
from nlibias.extension.pipeline import PipelineResult, StageReport, run_pipeline
from nlibias.io.overwrites import file_identity
from nlibias.schema.declared import PathArg, declared, one_or_many
from nlibias.schema.paths import CachePath
from nlibias.schema.placement import Device
from nlibias.textio.text_files import read_text


class ExtendSettings(TypedDict, total=False):
    """The command line's options, put on top of the configuration by :func:`extend`; an unset one
    (left out, ``None``, an empty list, ``False``) leaves the configuration's value."""

    out_dir: PathArg | None
    """The run directory (config ``run_dir``; default ``runs/next``)."""
    source: PathArg | None
    """BBNLI JSON directory (default: the resolved data dir: NLIBIAS_DATA_DIR, user cache, download)."""
    fill_model: str | None
    """Fill model (``mlm.model``): a masked LM (hub id or path) or a causal LM (``smollm2``,
    ``FILE.gguf``, ``causal:NAME``); ``fake`` for a dry run."""
    top_k: int | None
    """Whole-word fills per masked hypothesis (``mlm.top_k``; default 20)."""
    classifiers: str | Sequence[str]
    """Filter NLI models: hub ids, paths or ``prompt:MODEL`` (replace ``filter.models``)."""
    compare_fill: str | Sequence[str]
    """Other fill models compared with ``fill_model`` on the same masked samples
    (``filter.compare_fills``; their fills never enter the dataset)."""
    holdout: str | Sequence[str]
    """Held-out models, never used to filter (replace ``filter.holdout``)."""
    policy: str | None
    """Keep a candidate when ``any``, ``all`` or ``at_least:K`` filter models mispredict (``filter.policy``)."""
    subtopics: str | Sequence[str]
    """Subtopic ids to extend (default: all)."""
    unvalidated: bool
    """Go on without human judgements (``validation.unvalidated``; the card says so in its first line)."""
    judgements: PathArg | None
    """Judgements CSV (``validation.judgements``; default ``<run_dir>/validation/judgements.csv``)."""
    templates: PathArg | None
    """Masked-template file (``templates.curated``): ``default``, the curated file shipped with nlibias;
    ``none``, no curated templates."""
    derive: bool | None
    """Also derive masked templates automatically from the source (``templates.derive``)."""
    cache: CachePath | None
    """Prediction cache file (default: ``$NLIBIAS_CACHE`` or the user cache)."""
    device: Device | None
    """Where the fill and filter models run (``mlm.device`` and ``filter.device``): cpu, cuda, ..."""


@declared
def extend_config(
    config: ExtendConfig | PathArg | None = None, **settings: Unpack[ExtendSettings]
) -> ExtendConfig:
    """``config`` (an :class:`ExtendConfig`, a YAML file, or None: the defaults) with ``settings`` on
    top, checked again; ``templates="none"`` turns the curated templates off."""
    if config is None:
        config = ExtendConfig()
    elif not isinstance(config, ExtendConfig):
        config = load_config(config)
    overrides: dict[str, Any] = {}
    for setting, keys in SETTING_KEYS.items():  # each setting on the configuration keys it overrides
        value = _override_value(setting, settings.get(setting))
        overrides.update(dict.fromkeys(keys, value))
    return with_overrides(config, overrides)


def _override_value(setting: str, value: Any) -> Any:
    """A setting's value as the configuration takes it (``None``: unset; names a list, paths text).

    >>> _override_value("classifiers", "fake:a"), _override_value("holdout", ()), _override_value("derive", False)
    (['fake:a'], None, False)
    """
    if setting in ("classifiers", "compare_fill", "holdout", "subtopics"):
        return one_or_many(value if value is not None else ()) or None
    if setting == "unvalidated":
        return True if value else None
    return str(value) if isinstance(value, PurePath) else value


@declared
def extend(
    config: ExtendConfig | PathArg | None = None,
    *,
    from_stage: str | None = None,
    until: str | None = None,
    force: bool = False,
    progress: bool = True,
    on_stage: Callable[[StageReport], None] | None = None,
    **settings: Unpack[ExtendSettings],
) -> PipelineResult:
    """``nlibias extend``: extend BBNLI the BBNLI-next way (masks → masked → fill → filter →
    validate → counterfactual → export) with :func:`extend_config`'s configuration; a rerun
    resumes. ``status``: ``complete``, ``stopped`` (``until``) or ``awaiting_judgements``;
    ``on_stage`` is called with each stage's report.

    >>> # nlibias.extend(out_dir="runs/next", fill_model="fake", classifiers=["fake:a"],
    >>> #                unvalidated=True).status"""
    chosen = extend_config(config, **settings)
    if config is not None and not isinstance(config, ExtendConfig):
        _refuse_replacing_the_config(config, chosen)
    try:
        return run_pipeline(
            chosen, from_stage=from_stage, until=until, progress=progress, on_stage=on_stage, force=force
        )
    except ConfigError as error:  # a setting the file made, named by its key and line
        if config is None or isinstance(config, ExtendConfig):
            raise
        given = [s for s in SETTING_KEYS if _override_value(s, settings.get(s)) is not None]
        raise as_the_files(error, config, given) from None


def _refuse_replacing_the_config(path: PathArg, chosen: ExtendConfig) -> None:
    """Refuse a configuration file that is the run's own ``config.yaml``, which the run replaces with
    the resolved configuration, unless it already is that (a rerun from the run's own file)."""
    written = Path(chosen.run_dir) / "config.yaml"
    if file_identity(written) != file_identity(path) or read_text(path) == dump_config(chosen):
        return
    raise ConfigError(
        f"{{config}} {str(path)!r} is the run's own config.yaml in {{out_dir}}, which the run replaces "
        "with the resolved configuration (your file's comments and settings as written would be lost): "
        "keep your configuration file outside the run folder, or name another {out_dir}",
        parameter="config",
        names=("out_dir",),
    )
