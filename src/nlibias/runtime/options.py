"""How a job runs: :class:`ModelOptions` (how models load and answer) and :class:`RunOptions`
(cache, bootstrap, seed, limit, progress), built once where a job starts.

>>> options = ModelOptions.of(device="cpu", max_new_tokens=16)
>>> options.device, options.max_new_tokens, options.mode
('cpu', 16, 'scored')
>>> ModelOptions.of(devise="cpu")
Traceback (most recent call last):
...
nlibias.errors.ConfigError: ModelOptions takes no argument 'devise' (did you mean 'device'?)
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import Annotated, Any, Self

from pydantic import ConfigDict, Field, ValidationInfo, field_validator

from nlibias.models.generative.defaults import DEFAULT_MAX_NEW_TOKENS, OptionScore
from nlibias.runtime.cache import PredictionCache, default_cache_path
from nlibias.schema.applies import RAY_APPLIES, AppliesTo, refuse_inapplicable
from nlibias.schema.declared import (
    Allowed,
    DrawSeed,
    NonNegativeFloat,
    PositiveInt,
    Resamples,
    Seed,
    declared,
    field_hints,
    unknown_argument,
)
from nlibias.schema.model_keys import check_mode
from nlibias.schema.paths import CachePath
from nlibias.schema.placement import Device, RayAddress
from nlibias.schema.settings import Settings

SCORED_APPLIES = AppliesTo(  # how scored options are compared means nothing to generated answers
    "scored answers",
    lambda settings: settings.get("mode", "scored") == "scored",
    "generated answers are read from their text",
    fix="leave {{{name}}} out, or give 'scored' as {{mode}}",
    names=("mode",),
)

CacheOption = Annotated[
    bool | CachePath | PredictionCache | None,
    Allowed("True, False, a file path (not blank) or a PredictionCache"),
]
"""Where predictions are cached, as every job that caches takes it (audit, score, explain, demo)."""


class _Options(Settings):
    """Options made from keywords, an unknown name refused; each field's docstring is its flag's help."""

    model_config = ConfigDict(strict=True, use_attribute_docstrings=True)

    @classmethod
    def of(cls, **settings: Any) -> Self:
        return cls.split(settings, caller=cls.__name__)[1]

    @classmethod
    def split(
        cls, settings: Mapping[str, Any], *, caller: str, also: Collection[str] = ()
    ) -> tuple[dict[str, Any], Self]:
        """``settings`` cut into the ``caller``'s own keywords (``also``) and these options.

        >>> ModelOptions.split({"device": "cpu", "seed": 1}, caller="audit", also=["seed"])[0]
        {'seed': 1}
        >>> ModelOptions.split({"out": "x"}, caller="audit", also=["out_dir"])
        Traceback (most recent call last):
        nlibias.errors.ConfigError: audit takes no argument 'out' (did you mean 'out_dir'?)
        """
        known = list(cls.model_fields)
        for name in settings:
            if name not in known and name not in also:
                raise unknown_argument(caller, name, [*also, *known])
        chosen = {k: v for k, v in settings.items() if k in known}
        if isinstance(chosen.get("devices"), list):
            chosen["devices"] = tuple(chosen["devices"])
        return {k: v for k, v in settings.items() if k not in known}, cls(**chosen)

    def __init__(self, **settings: Any) -> None:
        super().__init__(**settings)
        defaults = {name: field.default for name, field in type(self).model_fields.items()}
        refuse_inapplicable(dict(self), field_hints(type(self)), defaults)


class ModelOptions(_Options):
    """How the models of a job are loaded, placed and asked."""

    mode: str = "scored"
    """Generative answers: scored (yes or no by log-probability, one forward pass) or generated
    (free text, parsed)."""
    max_new_tokens: PositiveInt = DEFAULT_MAX_NEW_TOKENS
    """Token limit of generated answers (mode generated)."""
    option_score: Annotated[OptionScore, Allowed("total or per-byte"), SCORED_APPLIES] = "total"
    """Multiple-choice questions (BBQ) in mode scored: pick the option by its total log-probability,
    or per-byte (divided by its text's UTF-8 length, as lm-eval's acc_bytes; its acc_norm on ASCII
    options), which does not favour short options."""
    label_map: str | None = None
    """Override the NLI classifiers' label mapping, e.g. 0=entailment,1=neutral,2=contradiction."""
    revision: str | None = None
    """Hub revision (branch, tag or commit) of the NLI classifiers and masked LMs to pin; a
    generative or causal LM is pinned in its name, NAME@REVISION."""
    device: Device | None = None
    """cpu, cuda, cuda:N or mps. Default (or auto): $NLIBIAS_DEVICE if set, else a GPU when present."""
    dtype: str | None = None
    """Weights of local models: auto, float32, bfloat16 or float16. Default auto: the checkpoint's
    own (float32 unless its config records another), on every device. bfloat16 is faster on a
    GPU; its probabilities move a little from float32's."""
    max_tokens: Annotated[PositiveInt, Allowed("a positive number of tokens a batch may hold")] = 8192
    """Token budget of one batch (padding included)."""
    quantize: str | None = None
    """CPU only: int8 (dynamic int8 Linear layers). Faster, but changes probabilities and can flip
    labels: check agreement on your model first. Measured speed and agreement: docs/benchmarks.md
    (Optional speed flags)."""
    compile: bool = False
    """torch.compile the classifiers: tens of seconds of compilation, no reliable gain measured on
    CPU (docs/benchmarks.md)."""
    threads: int | None = None
    """torch CPU threads (default: one per core)."""
    devices: tuple[Device, ...] = ()
    """Shard each classifier over these devices, one worker process each: cuda:0,cuda:1 on the
    command line, ("cuda:0", "cuda:1") in Python (docs/scaling.md). Same results and cache
    entries as one process."""
    ray_address: RayAddress | None = None
    """Run each classifier on Ray Data actors: 'local' starts a local Ray instance, or a cluster
    address ('auto', 'ray://host:10001'). Needs nlibias[ray] (docs/scaling.md)."""
    ray_workers: Annotated[PositiveInt, RAY_APPLIES] = 2
    """Ray actors per classifier."""
    ray_gpus_per_worker: Annotated[NonNegativeFloat, RAY_APPLIES] = 0.0
    """GPUs each Ray actor asks for (0: CPU actors)."""
    concurrency: int | None = None
    """Requests in flight to each openai:URL#MODEL server (default 4). Raise it for a GPU server
    that batches concurrent requests, such as vLLM (docs/scaling.md)."""

    @field_validator("mode", mode="before")
    @classmethod
    def _known_mode(cls, mode: Any) -> Any:
        return check_mode(mode)

    @field_validator("quantize", "compile", "threads", mode="before")
    @classmethod
    def _speed_value(cls, value: Any, info: ValidationInfo) -> Any:
        from nlibias.models.hf_common import check_speed_values

        check_speed_values(**{str(info.field_name): value})
        return value


DEFAULT_MODEL_OPTIONS = ModelOptions()


class RunOptions(_Options):
    """How an audit runs around its models.

    >>> RunOptions(cache=False, bootstrap=0).bootstrap
    0
    >>> RunOptions(seed=-1)
    Traceback (most recent call last):
    nlibias.errors.ConfigError: seed is -1; pass an integer from 0 to 2**63 - 1
    >>> RunOptions(bootstrap=0, seed=3)
    Traceback (most recent call last):
    nlibias.schema.applies.InapplicableOption: seed 3 applies to random draws (bootstrap resamples, a limit's subset), and nothing is drawn (bootstrap 0, no subset); leave seed out, or give bootstrap resamples
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)  # PredictionCache

    cache: CacheOption = True
    """``True``: the user prediction cache; a path: that SQLite file; a :class:`PredictionCache`;
    ``False``/``None``: none."""
    bootstrap: Resamples = 1000
    """Bootstrap resamples for the 95% CIs (0: none)."""
    seed: DrawSeed = 0
    """The seed of the bootstrap and of the ``limit`` subset (refused where nothing is drawn)."""
    limit: Annotated[int, Field(ge=1), Allowed("a number of samples of at least 1")] | None = None
    """Audit a stratified subset of about N samples: pro/anti pairs (BBQ: filled templates) kept
    whole, every subtopic, drawn with the seed (recorded in metrics.json under subset). For a quick
    first look."""
    progress: Annotated[bool, Allowed("True or False")] = True
    """Progress bars (shown only on a terminal)."""


@declared
def check_bootstrap(bootstrap: Resamples, seed: Seed = 0) -> None:
    """Refuse a bad number of resamples or seed.

    >>> check_bootstrap(100, seed=-5)
    Traceback (most recent call last):
    nlibias.errors.ConfigError: seed must be an integer from 0 to 2**63 - 1; got int -5
    """


def cache_file(cache: CacheOption) -> Path | None:
    """The file a ``cache`` setting names (None: the user cache, or no cache), for the overwrite guard."""
    if isinstance(cache, PredictionCache):
        return cache.path
    return Path(cache) if isinstance(cache, str | Path) else None


def open_cache(cache: CacheOption, stack: ExitStack) -> PredictionCache | None:
    """The prediction cache ``cache`` names, opened in ``stack`` (an object is used as it is).

    >>> with ExitStack() as stack:
    ...     open_cache(False, stack) is None
    True
    """
    if cache is None or cache is False:
        return None
    if isinstance(cache, PredictionCache):
        return cache
    path = default_cache_path() if cache is True else cache
    return stack.enter_context(PredictionCache(path))


DEFAULT_RUN_OPTIONS = RunOptions()
