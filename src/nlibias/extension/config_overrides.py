"""Settings given beside an ``nlibias extend`` configuration file (flags, :func:`nlibias.extend`'s
arguments): which keys each overrides, the configuration re-validated with them, and an error about
a setting the file made named at the file's line."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from nlibias.errors import ConfigError, NlibiasError, SourceError
from nlibias.extension.config import ExtendConfig, known_keys, model_specs, settings_problem
from nlibias.extension.config_rules import LOADING, fill_loads_weights, not_loaded
from nlibias.schema.applies import option_applies_to_nothing
from nlibias.schema.model_ref import ModelRef
from nlibias.schema.problems import problems
from nlibias.textio.text_files import read_text
from nlibias.textio.yaml_unique import load_yaml, yaml_line_of


def with_overrides(config: ExtendConfig, overrides: Mapping[str, Any]) -> ExtendConfig:
    """A copy with dotted keys replaced (``{"mlm.top_k": 5, "filter.models": ["m"]}``), re-validated.

    >>> with_overrides(ExtendConfig(), {"mlm.top_k": 5}).mlm.top_k
    5
    """
    data = config.model_dump()
    keys = SETTING_KEYS["device"]  # one setting places both stages
    device = overrides.get(keys[0]) if all(overrides.get(k) == overrides.get(keys[0]) for k in keys) else None
    for dotted, value in overrides.items():
        if value is None or (device is not None and dotted in keys):
            continue
        target = data
        *parents, last = dotted.split(".")
        for part in parents:
            target = target[part]
        target[last] = value
    if device is not None:
        _place_device(data, device)
    try:
        checked = ExtendConfig.model_validate(data)
    except ValidationError as exc:
        raise _override_error(exc, overrides) from None
    problem = settings_problem(checked)
    if problem is not None:
        key, reason = problem  # the file's stop words (revision) vs the fill model given
        parameter = (
            "fill_model" if key in ("mlm.stopwords", "mlm.revision") else _OVERRIDE_PARAMETERS.get(key, key)
        )
        raise ConfigError(
            f"{{{parameter}}} {reason}" if reason.startswith("'") else reason, parameter=parameter
        )
    return checked


SETTING_KEYS: dict[str, tuple[str, ...]] = {
    "out_dir": ("run_dir",),
    "source": ("source",),
    "fill_model": ("mlm.model",),
    "top_k": ("mlm.top_k",),
    "classifiers": ("filter.models",),
    "compare_fill": ("filter.compare_fills",),
    "holdout": ("filter.holdout",),
    "policy": ("filter.policy",),
    "subtopics": ("subtopics",),
    "unvalidated": ("validation.unvalidated",),
    "judgements": ("validation.judgements",),
    "templates": ("templates.curated",),
    "derive": ("templates.derive",),
    "cache": ("cache",),
    "device": ("mlm.device", "filter.device"),
}
"""Each setting of :func:`nlibias.extend` (and option of ``nlibias extend``) → the keys it overrides."""

_OVERRIDE_PARAMETERS = {key: setting for setting, keys in SETTING_KEYS.items() for key in keys}


def as_the_files(error: ConfigError, path: str | Path, given: Collection[str]) -> NlibiasError:
    """``error`` with each parameter it names that the configuration file ``path`` set (and no
    setting in ``given`` overrides) named as the file's key; the file's error at that key's line
    when the parameter at fault is one (the YAML origin wins over a flag that was not given)."""
    text = read_text(path)
    raw = load_yaml(text, path)
    from_file: dict[str, str] = {}
    for name in dict.fromkeys(n for n in (error.parameter, *error.names) if n):
        setting = _OVERRIDE_PARAMETERS.get(name, name)
        keys = [k for k in SETTING_KEYS.get(setting, (name,)) if _sets(raw, k.split("."))]
        if keys and setting not in given:
            from_file[name] = keys[0]
    if not from_file:
        return error
    message = error.render(
        lambda n: from_file.get(n, f"{{{n}}}"),
        lambda n: f"the key {from_file[n]}" if n in from_file else f"{{parameter {n}}}",
    )
    others = tuple(n for n in error.names if n not in from_file)
    parameter = error.parameter or ""
    if parameter not in from_file:
        return ConfigError(message, parameter=error.parameter, names=others)
    key = from_file[parameter]
    field = None if error.mentions(parameter) else key
    return SourceError(path, field, message, line=yaml_line_of(text, key.split(".")), names=others)


def _sets(raw: Any, keys: Sequence[str]) -> bool:
    """Whether the YAML document ``raw`` gives a value at ``keys``."""
    for key in keys:
        if not isinstance(raw, dict) or raw.get(key) is None:
            return False
        raw = raw[key]
    return True


def _place_device(data: dict[str, Any], device: Any) -> None:
    """Put ``device`` on the stages whose models load weights here, refusing it when none does."""
    mlm, filters = data["mlm"], data["filter"]
    specs, compared = model_specs(filters["models"]), filters["compare_fills"]
    models = [s.get("model") if isinstance(s, dict) else s for s in specs] if isinstance(specs, list) else []
    fills: list[Any] = [mlm["model"], *(compared if isinstance(compared, list) else [compared])]
    if not models or not all(isinstance(name, str) for name in [*fills, *models]):
        mlm["device"] = filters["device"] = device  # the names' validation says what is wrong
        return
    mlm["device"] = device if any(fill_loads_weights(spec) for spec in fills) else None
    filters["device"] = None if all(ModelRef.unread(str(name)).is_fake for name in models) else device
    if mlm["device"] is None and filters["device"] is None:
        given = f"none of those given does: {', '.join(not_loaded(name) for name in [*fills, *models])}"
        applies_to = f"fill and filter {LOADING} (a masked or causal LM, an NLI classifier)"
        raise option_applies_to_nothing("device", applies_to, value=device, given=given)


def _override_error(exc: ValidationError, overrides: Mapping[str, Any]) -> ConfigError:
    """The error of an override that does not validate, naming the parameter it came from (``top_k``,
    not ``mlm.top_k``)."""
    _, field, reason, *_ = problems(exc, known_keys=known_keys, whole="config")[0]
    given = [key for key, value in overrides.items() if value is not None]
    field = field or ""
    # the override at the field, or under the section whose check failed (named in its reason)
    under = [
        key for key in given if key == field or key.startswith(field + ".") or field.startswith(key + ".")
    ]
    named = [key for key in under if key.rsplit(".", 1)[-1].rstrip("s") in reason]
    key = next(iter(named or under), None)
    models = [k for k in getattr(exc.errors()[0].get("ctx", {}).get("error"), "models", ()) if k in given]
    if key is None and models:  # a setting of the file that the models given on top make inapplicable
        parameter = _OVERRIDE_PARAMETERS[models[0]]
        message = f"{parameter} {overrides[models[0]]!r}: {field} of the configuration: {reason}"
        return ConfigError(message, parameter=parameter)
    if key is None:
        found = problems(exc, known_keys=known_keys, whole="config")
        lines = (str(SourceError("overrides", p.field, p.reason, line=p.line)) for p in found)
        return ConfigError("\n".join(lines), parameter="overrides")
    parameter = _OVERRIDE_PARAMETERS.get(key, key.rsplit(".", 1)[-1])
    return ConfigError(f"{{{parameter}}} {overrides[key]!r}: {reason}", parameter=parameter)
