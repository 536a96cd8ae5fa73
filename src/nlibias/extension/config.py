"""The configuration of an ``nlibias extend`` run: a YAML file validated by pydantic (unknown keys
and settings no model would read refused, naming the YAML line and key).

>>> config = ExtendConfig.model_validate({"filter": {"models": ["a", "b"], "holdout": ["c"]}})
>>> config.filter.policy, config.mlm.top_k, [m.model for m in config.filter.models]
('any', 20, ['a', 'b'])
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from nlibias.errors import ConfigError, SourceError
from nlibias.extension.config_rules import (
    LOADING,
    CardName,
    ModelName,
    Refused,
    ensemble_refusal,
    fill_loads_weights,
    in_their_words,
    listed_once,
    not_loaded,
    parse_policy,
    refuse_set,
)
from nlibias.models.batching import check_batch_limits
from nlibias.models.generative.sources import gguf_file_problem
from nlibias.models.hf_common import check_speed_values, dtype_choice
from nlibias.models.registry import classifier_kind_problem
from nlibias.runtime.build import check_label_map_applies
from nlibias.schema.applies import option_applies_to_nothing
from nlibias.schema.declared import PathText, Seed
from nlibias.schema.model_ref import ModelRef, fill_kind_problem, same_fill, split_fill_spec
from nlibias.schema.paths import CacheText
from nlibias.schema.placement import Device
from nlibias.schema.problems import source_error
from nlibias.schema.settings import Settings
from nlibias.textio.text_files import read_text
from nlibias.textio.yaml_unique import load_yaml, yaml_line_of

DEFAULT_MLM = "bert-large-cased-whole-word-masking"
PAPER_FILTER_MODELS = (
    "ynie/electra-large-discriminator-snli_mnli_fever_anli_R1_R2_R3-nli",
    "ynie/roberta-large-snli_mnli_fever_anli_R1_R2_R3-nli",
    "ynie/bart-large-snli_mnli_fever_anli_R1_R2_R3-nli",
)
PAPER_HOLDOUT_MODELS = ("ynie/albert-xxlarge-v2-snli_mnli_fever_anli_R1_R2_R3-nli",)
MODEL_OPTIONS = ("revision", "label_map", "quantize", "compile")  # how a filter model is loaded


class _Strict(Settings):
    model_config = ConfigDict(strict=True)


class FilterModelConfig(_Strict):
    """A model by hub id or local path (a bare string in YAML is the same as ``{model: ...}``)."""

    model: ModelName
    revision: str | None = None
    name: str | None = None
    """The key its results are recorded under (default: ``model``)."""
    label_map: str | None = None
    """NLI models only: ``0=entailment,1=neutral,2=contradiction`` when the config's labels are unusable."""
    quantize: str | None = None
    """NLI filter models on CPU only: ``int8`` (faster, changes probabilities: docs/benchmarks.md)."""
    compile: bool = False
    """NLI filter models: ``torch.compile`` the model (compilation first; see docs/benchmarks.md)."""

    @model_validator(mode="after")
    def _check_speed(self) -> FilterModelConfig:
        in_their_words(check_speed_values, quantize=self.quantize, compile=self.compile)
        return self

    @property
    def key(self) -> str:
        return self.name or self.model

    def refusal(self, held_out: bool) -> tuple[str, ConfigError] | None:
        """The first loading option that nothing reads, and its refusal: any of a held-out model's
        or a fake's; a prompted LM's label map, quantize and compile (it scores label words)."""
        ref, model = ModelRef.unread(self.model), self.model
        options = (
            MODEL_OPTIONS if held_out or ref.is_fake else MODEL_OPTIONS[1:] if ref.kind == "prompt" else ()
        )
        why = "a fake loads no weights" if ref.is_fake else "a prompted LM scores label words"
        for option in (o for o in options if getattr(self, o) not in (None, False)):
            if held_out:
                pin = (
                    " (the card records its name: to record the version to evaluate, name it MODEL@REVISION)"
                )
                fix = f"leave {{{option}}} out{pin if option == 'revision' else ''}"
                held = f"models the pipeline loads, and the held-out {model!r} never is (the card names it)"
                return option, option_applies_to_nothing(option, held, fix=fix)
            if option == "label_map":
                try:
                    check_label_map_applies([ref], fix="leave {label_map} out")
                except ConfigError as refusal:
                    return option, refusal
            if option == "revision":
                loaded = (
                    f"models loaded from the hub or a local directory, not to {model!r}: a fake loads nothing"
                )
                return option, option_applies_to_nothing(
                    option, loaded, subject=f"{{revision}} {self.revision!r}"
                )
            applies_to = f"sequence-classification models (a Hugging Face model), not to {model!r}: {why}"
            return option, option_applies_to_nothing(option, applies_to)
        return None


def _none_as_null(value: Any) -> Any:
    """``none`` (the word the command line takes) as YAML null: no file."""
    return None if isinstance(value, str) and value.lower() == "none" else value


def _held_once(specs: list[FilterModelConfig]) -> list[FilterModelConfig]:
    """Held-out models, refusing one listed twice (the card would name it twice)."""
    listed_once([spec.model for spec in specs])
    return specs


def model_specs(value: Any) -> Any:
    if isinstance(value, str | dict):
        value = [value]
    if isinstance(value, list):
        return [{"model": v} if isinstance(v, str) else v for v in value]
    return value


class TemplatesConfig(_Strict):
    curated: Annotated[PathText | None, BeforeValidator(_none_as_null)] = "default"
    """A masked-template JSONL file; ``default`` = the curated file shipped with nlibias; ``none``
    (or null) = none."""
    derive: bool = False
    """Also derive masked templates automatically from the source's hypothesis templates."""
    stopwords: PathText | None = None
    """Stop-word file for derivation (default: the one shipped with nlibias)."""

    @model_validator(mode="after")
    def _check_applies(self) -> TemplatesConfig:
        if self.curated is None and not self.derive:
            raise Refused(
                "no curated templates (none) and none derived (templates.derive is false) leave the run "
                "no masked templates: name a template file (default: the shipped one), or derive them "
                "(templates.derive: true)",
                at=("curated",),
            )
        if not self.derive:
            text = ("derived templates (templates.derive: true)", "templates.derive is false")
            refuse_set(self, ("stopwords",), text, at=(), models=("templates.derive",))
        return self


class DeviceConfig(_Strict):
    device: Device | None = None
    dtype: str | None = None
    threads: int | None = None
    """torch CPU threads while this stage runs (default: one per core)."""
    max_tokens: int = 8192
    max_batch_size: int = 128

    @field_validator("dtype", "threads", "max_tokens", "max_batch_size", mode="before")
    @classmethod
    def _backend_limit(cls, value: Any, info: ValidationInfo) -> Any:
        """The backends' own rules, when the configuration is read (not at the stage that loads)."""
        if info.field_name == "dtype":
            if isinstance(value, str):  # another type: pydantic's own check names it
                in_their_words(dtype_choice, dtype=value)
            return value
        check = check_speed_values if info.field_name == "threads" else check_batch_limits
        in_their_words(check, **{str(info.field_name): value})
        return value

    def loading(self) -> dict[str, Any]:
        """How the stage's models load and batch (keyword arguments of a backend)."""
        return self.model_dump(include={"device", "dtype", "threads", "max_tokens", "max_batch_size"})


class MLMConfig(DeviceConfig):
    model: ModelName = DEFAULT_MLM
    revision: str | None = None
    top_k: int = Field(default=20, ge=1)
    block_list: list[str] = Field(default_factory=list)
    """Words never used as fills (compared lower-cased)."""
    stopwords: PathText | None = None
    """Stop-word file of a causal fill (default: the one shipped with nlibias)."""


class FilterConfig(DeviceConfig):
    models: list[FilterModelConfig] = Field(
        default_factory=lambda: [FilterModelConfig(model=m) for m in PAPER_FILTER_MODELS]
    )
    holdout: Annotated[list[FilterModelConfig], AfterValidator(_held_once)] = Field(
        default_factory=lambda: [FilterModelConfig(model=m) for m in PAPER_HOLDOUT_MODELS]
    )
    """Models kept out of filtering (recorded in the card; never loaded by the pipeline), each once."""
    policy: str | int | dict[str, int] = "any"
    """``any`` (paper), ``all``, ``at_least:K`` (or ``{at_least: K}``)."""
    compare_fills: list[ModelName] = Field(default_factory=list)
    """Other fill models compared with ``mlm.model`` on the same masked samples (never feeding the
    dataset): ``filter/fill_compare.json``, which the card shows."""

    _normalise = field_validator("models", "holdout", mode="before")(
        classmethod(lambda cls, v: model_specs(v))
    )

    @model_validator(mode="after")
    def _check(self) -> FilterConfig:
        held = {m.key for m in self.holdout} | {m.model for m in self.holdout}
        keys, models = [m.key for m in self.models], [m.model for m in self.models]
        refusal = ensemble_refusal(keys, in_their_words(parse_policy, value=self.policy), held, models)
        if refusal is not None:
            raise Refused(refusal, at=self._culprit(keys, models), models=("filter.models",))
        return self

    def _culprit(self, keys: list[str], models: list[str]) -> tuple[str | int, ...]:
        """Where an ensemble's refusal points: a filter model listed twice (its second place), a
        held-out model that also filters; else the whole section."""
        twice = [index for index, key in enumerate(keys) if key in keys[:index]]
        held = [i for i, m in enumerate(self.holdout) if {m.key, m.model} & {*keys, *models}]
        return ("models", twice[0]) if twice else ("holdout", held[0]) if held else ()

    @model_validator(mode="after")
    def _check_applies(self) -> FilterConfig:
        """Refuse what nothing reads (loading options; ``device``, ``dtype`` with fakes only)."""
        for key, specs in (("models", self.models), ("holdout", self.holdout)):
            for index, spec in enumerate(specs):
                if (refused := spec.refusal(held_out=key == "holdout")) is not None:
                    raise Refused(refused[1], at=(key, index, refused[0]))
        if all(ModelRef.unread(spec.model).is_fake for spec in self.models):
            applies_to = f"filter {LOADING} (a Hugging Face model, prompt:MODEL)"
            given = f"none of filter.models does: {', '.join(f'{m.model!r} (a fake)' for m in self.models)}"
            refuse_set(self, ("device", "dtype"), (applies_to, given), at=(), models=("filter.models",))
        return self

    @property
    def policy_text(self) -> str:
        return parse_policy(self.policy).describe()


class ValidationConfig(_Strict):
    judgements: PathText | None = None
    """Judgements CSV (default: ``<run_dir>/validation/judgements.csv``)."""
    unvalidated: bool = False
    """Go on without human judgements (the card then says so in its first line)."""


class ExtendConfig(_Strict):
    """Everything that describes an extension run (see ``configs/bbnli-next.yaml``)."""

    run_dir: PathText = "runs/next"
    source: PathText | None = None
    """BBNLI JSON directory (default: the resolved data dir: NLIBIAS_DATA_DIR, user cache, download)."""
    subtopics: Annotated[list[str], AfterValidator(listed_once)] = Field(default_factory=list)
    """Subtopic ids to extend (default: all)."""
    templates: TemplatesConfig = TemplatesConfig()
    mlm: MLMConfig = MLMConfig()
    filter: FilterConfig = FilterConfig()
    validation: ValidationConfig = ValidationConfig()
    cache: CacheText | None = None
    """Prediction cache file (default: ``$NLIBIAS_CACHE`` or the user cache)."""
    seed: Seed = 0
    """Recorded in the card (the pipeline itself draws no random numbers)."""
    pretty_name: CardName = "BBNLI-next (nlibias run)"

    @model_validator(mode="after")
    def _check_fill_applies(self) -> ExtendConfig:
        """Refuse ``mlm.device``, ``mlm.dtype`` and ``mlm.revision`` when no fill model loads weights here."""
        fills = [self.mlm.model, *self.filter.compare_fills]
        if not any(fill_loads_weights(spec) for spec in fills):
            given = f"none of those given does: {', '.join(not_loaded(spec) for spec in fills)}"
            text = (f"fill {LOADING} (a masked or causal LM: mlm.model, filter.compare_fills)", given)
            models = ("mlm.model", "filter.compare_fills")
            refuse_set(self.mlm, ("device", "dtype", "revision"), text, at=("mlm",), models=models)
        return self


def _gguf_problem(spec: str) -> str | None:
    """Why a ``.gguf`` model path is no GGUF file (a text file, a cut-short one)."""
    target = ModelRef.named(spec).name
    if not target.lower().endswith(".gguf") or not Path(target).expanduser().is_file():
        return None
    problem = gguf_file_problem(Path(target).expanduser())
    return None if problem is None else f"the file {problem}"


def _is_gguf(kind: str, spec: str) -> bool:
    """A causal fill read from a GGUF file: the embedded SmolLM2 or a ``.gguf`` path (``gguf:`` too)."""
    ref = ModelRef.named(spec)
    return kind == "causal" and (ref.kind == "gguf" or ref.is_gguf)


_SECTIONS: dict[str, type[BaseModel]] = {
    "templates": TemplatesConfig,
    "mlm": MLMConfig,
    "filter": FilterConfig,
    "validation": ValidationConfig,
    "models": FilterModelConfig,
    "holdout": FilterModelConfig,
}


def known_keys(loc: Sequence[Any]) -> list[str]:
    parent = next((str(p) for p in reversed(loc[:-1]) if str(p) in _SECTIONS), None)
    model = _SECTIONS[parent] if parent else ExtendConfig
    return list(model.model_fields)


def load_config(path: str | Path) -> ExtendConfig:
    """Read and validate a YAML run configuration (a SourceError names the file, line and key)."""
    path = Path(path)
    if not path.exists():
        raise SourceError(path, None, "configuration file does not exist")
    text = read_text(path)
    raw = load_yaml(text, path, parameter="config")
    if not isinstance(raw, dict):
        raise SourceError(path, None, "expected a mapping of settings at the top level")
    try:
        config = ExtendConfig.model_validate(raw)
    except ValidationError as exc:
        raise source_error(exc, path, text=text, known_keys=known_keys, whole="config") from None
    problem = settings_problem(config)
    if problem is not None:
        key, reason = problem
        raise SourceError(path, key, reason, line=yaml_line_of(text, key.split(".")))
    return config


def settings_problem(config: ExtendConfig) -> tuple[str, str] | None:
    """``(dotted key, reason)`` of a setting that names a missing model path, repeats another
    setting or applies to nothing (the checks that span sections); ``None`` when none does."""
    named = [("mlm.model", config.mlm.model)]
    named += [("filter.compare_fills", spec) for spec in config.filter.compare_fills]
    named += [("filter.models", spec.model) for spec in config.filter.models]
    for key, spec in [*named, *(("filter.holdout", held.model) for held in config.filter.holdout)]:
        try:  # the options' syntax, before any stage runs
            ModelRef.parse(spec, parameter=key)
        except ConfigError as exc:
            return key, str(exc)
    for key, spec in named:  # an unknown kind: refused now, not hours in
        kind_problem = classifier_kind_problem if key == "filter.models" else fill_kind_problem
        problem = kind_problem(spec)
        if problem is not None:
            return key, problem
        problem = ModelRef.named(spec).missing_path or _gguf_problem(spec)
        if problem is not None:
            return key, f"{spec!r}: {problem}"
    for held in config.filter.holdout:  # held out: an NLI classifier too, though never loaded here
        problem = classifier_kind_problem(held.model, use="to hold out")
        if problem is not None:
            return "filter.holdout", problem
    fills = [config.mlm.model, *config.filter.compare_fills]
    for index, spec in enumerate(fills[1:], 1):  # one fill model, however spelt, compared once
        same = next((earlier for earlier in fills[:index] if same_fill(spec, earlier)), None)
        if same == config.mlm.model:
            itself = "" if spec == same else f" ({same!r} spelt another way)"
            return "filter.compare_fills", (
                f"{spec!r} is the fill model itself{itself}; compare the fill model with another one"
            )
        if same is not None:
            twice = (
                f"{spec!r} is listed twice" if spec == same else f"{same!r} and {spec!r} name one fill model"
            )
            return "filter.compare_fills", f"{twice}; list each fill model once"
    judgements = config.validation.judgements
    if config.validation.unvalidated and judgements and not Path(judgements).exists():
        return "validation.judgements", (
            f"{judgements!r} does not exist, and an unvalidated run would go on without every judgement: "
            "check the path, or leave the judgements file out"
        )
    kinds = [split_fill_spec(f) for f in fills]
    kind, target = kinds[0]
    fill = ModelRef.named(target)
    pinned = kind == "causal" and not fill.is_server and fill.pinned[1] is not None
    if config.mlm.revision and pinned:
        return "mlm.revision", (
            f"the fill model {config.mlm.model!r} is pinned in its name (@REV), which is the revision "
            f"it loads; give the revision once: remove mlm.revision ({config.mlm.revision!r}) or the @REV"
        )
    files = [f for f, (kind, _) in zip(fills, kinds, strict=True) if _is_gguf(kind, f)]
    if config.mlm.revision and files and len(files) == sum(fill_loads_weights(f) for f in fills):
        return "mlm.revision", (
            f"a revision applies to hub models and local directories, and every fill model that loads "
            f"weights here is a GGUF file ({', '.join(files)}); remove mlm.revision ({config.mlm.revision!r})"
        )
    if config.mlm.stopwords is not None and all(kind != "causal" for kind, _ in kinds):
        return "mlm.stopwords", (
            "stop words apply to a causal fill only, and no fill model here is causal "
            f"({', '.join(fills)}); remove mlm.stopwords or name a causal fill model (causal:NAME)"
        )
    return None


def dump_config(config: ExtendConfig) -> str:
    """The resolved configuration as YAML (written into the run directory)."""
    return yaml.safe_dump(config.model_dump(), sort_keys=False, allow_unicode=True)
