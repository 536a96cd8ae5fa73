"""How models run: one frozen options object, built once where a job starts (the command line, the
Python API) and handed to :func:`nlibias.runtime.build.build_predictors` whole, instead of a
score of loose keywords passed from function to function.

>>> options = ModelOptions.of(device="cpu", max_new_tokens=16)
>>> options.device, options.max_new_tokens, options.mode
('cpu', 16, 'scored')
>>> ModelOptions.of(devise="cpu")
Traceback (most recent call last):
...
nlibias.errors.ConfigError: ModelOptions takes no argument 'devise' (did you mean 'device'?)
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from nlibias.errors import ConfigError
from nlibias.models.generative.defaults import DEFAULT_MAX_NEW_TOKENS


class ModelOptions(BaseModel):
    """Every setting of how the models of a job are loaded, placed and asked (the defaults: each
    model's own device and dtype, scored yes/no answers, 8,192 tokens a batch).

    What each setting applies to, and which combinations exclude each other, is checked against
    the models given by :func:`nlibias.runtime.build.build_predictors`: an option no model takes
    is refused there, naming the models."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    mode: str = "scored"
    """Generative LMs: ``scored`` (yes/no by log-probability) or ``generated`` (free text, parsed)."""
    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS
    """Generative LMs in ``generated`` mode: tokens to generate per answer."""
    label_map: str | None = None
    """NLI classifiers: their output labels in order (``entailment,neutral,contradiction``)."""
    revision: str | None = None
    """Hub models: the branch, tag or commit to load."""
    device: str | None = None
    """Where local models run (``cpu``, ``cuda``, ``cuda:1``, ``mps``); unset: the best there is."""
    dtype: str | None = None
    """Local models' weights (``auto``: each checkpoint's own; ``float32``, ``bfloat16``, ...)."""
    max_tokens: int = 8192
    """Tokens a batch may hold, padding included."""
    quantize: str | None = None
    """NLI classifiers: ``int8`` dynamic quantization on CPU."""
    compile: bool = False
    """NLI classifiers: ``torch.compile`` the model."""
    threads: int | None = None
    """torch threads for the process (unset: one per core)."""
    devices: tuple[str, ...] = ()
    """NLI classifiers sharded over one worker process per device (``("cuda:0", "cuda:1")``)."""
    ray_address: str | None = None
    """NLI classifiers on Ray Data actors (``local``, ``auto``, ``ray://host:10001``)."""
    ray_workers: int = 2
    """Ray actors per classifier."""
    ray_gpus_per_worker: float = 0.0
    """GPUs each Ray actor asks for."""
    concurrency: int | None = None
    """Requests in flight to each model behind a server (unset: 4)."""

    @classmethod
    def of(cls, **settings: Any) -> ModelOptions:
        """The options from keywords, refusing an unknown name or a bad value as a
        :class:`~nlibias.errors.ConfigError` that names the setting."""
        return cls.split(settings, caller="ModelOptions")[1]

    @classmethod
    def split(
        cls, settings: Mapping[str, Any], *, caller: str, also: Collection[str] = ()
    ) -> tuple[dict[str, Any], ModelOptions]:
        """``settings`` cut into the ``caller``'s own keywords (those named in ``also``) and the
        options of the rest: the one refusal of a keyword that is neither, naming the closest.

        >>> ModelOptions.split({"device": "cpu", "seed": 1}, caller="audit", also=["seed"])[0]
        {'seed': 1}
        >>> ModelOptions.split({"out": "x"}, caller="audit", also=["out_dir"])
        Traceback (most recent call last):
        nlibias.errors.ConfigError: audit takes no argument 'out' (did you mean 'out_dir'?)
        """
        known = list(cls.model_fields)
        for name in settings:
            if name not in known and name not in also:
                close = difflib.get_close_matches(name, sorted({*known, *also}), n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else f" (model options: {', '.join(known)})"
                raise ConfigError(f"{caller} takes no argument {name!r}{hint}", parameter=name)
        chosen = {k: v for k, v in settings.items() if k in known}
        if isinstance(chosen.get("devices"), list):
            chosen["devices"] = tuple(chosen["devices"])
        try:
            options = cls(**chosen)
        except ValidationError as error:
            problem = error.errors()[0]
            name = str(problem["loc"][0]) if problem["loc"] else "options"
            reason = str(problem["msg"]).removeprefix("Value error, ")
            raise ConfigError(f"{name} is {chosen.get(name)!r}: {reason}", parameter=name) from None
        return {k: v for k, v in settings.items() if k not in known}, options


DEFAULT_MODEL_OPTIONS = ModelOptions()
"""Every setting at its default."""
