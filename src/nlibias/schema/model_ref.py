"""``ModelRef``: a model reference as a user writes it, read by one parser.

Grammar (every part but ``NAME`` optional)::

    REF     = [KIND ":"] NAME ["?" OPTION ("&" OPTION)*]
    KIND    = two or more characters before the first ":", no "/", not starting with "."
    NAME    = a hub id, a path (``@REV`` pins a revision), or URL#MODEL
    OPTION  = key=value   (each key once)
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from nlibias.errors import ConfigError
from nlibias.textio.json_text import parse_json

SERVER_KINDS = ("openai", "openai-completions")
"""Kinds that name a model behind an OpenAI-compatible server: ``KIND:URL#MODEL``."""
MASKED_LM_KINDS = ("hf", "mlm", "masked")
"""Kinds that name a masked LM for a Hugging Face loader (``mlm:./m``)."""
CAUSAL_LM_KINDS = ("hf", "causal")
"""Kinds that name a causal LM for a Hugging Face loader (``causal:./m``)."""


Role = Literal["classifier", "generative", "masked", "checkpoint"]
"""What a model is asked as: an NLI classifier, a generative LM, a masked LM (fills, TP scores) or
a Hugging Face checkpoint of any head, loaded whole to be fine-tuned as a sequence classifier."""
_ROLE_WORDS = {
    "classifier": "an NLI classifier", "generative": "a generative LM", "masked": "a masked LM",
    "checkpoint": "a Hugging Face checkpoint to fine-tune as a sequence classifier (a hub name or a "
    "model directory, without a KIND: prefix)",
}  # fmt: skip
_ROLE_KINDS: dict[str, Role] = {
    "prompt": "classifier", "causal": "generative", "gguf": "generative",
    **dict.fromkeys(SERVER_KINDS, "generative"),
}  # fmt: skip
"""Kinds that say the role themselves (``prompt:MODEL`` is a classifier made of a causal LM)."""
_PREFIX_ROLES: dict[str, Role] = dict.fromkeys(("mlm", "masked"), "masked")
"""Kinds that say a role where the model's ``config.json`` says none or the role asked."""
GENERATIVE_ALIASES = ("smollm2",)
"""Names without a kind that name a generative LM (the embedded default)."""
LOADER_KINDS = ("causal", "gguf", "masked", "mlm", "hf")
"""Kinds whose name a Hugging Face loader reads (a hub id, a local path or a GGUF file)."""
_ARCHITECTURE_ROLES: dict[str, Role] = {
    "ForSequenceClassification": "classifier",
    "ForCausalLM": "generative",
    "LMHeadModel": "generative",
    "ForMaskedLM": "masked",
}
"""The ending of a Hugging Face ``config.json`` architecture → the role it is made for."""
FillKind = Literal["causal", "masked", "fake"]
"""Which filler a fill model is: a causal LM, a masked LM or the fake."""
FILL_KINDS = (*LOADER_KINDS, "fake", *SERVER_KINDS)
"""The kinds a fill model may be written with."""


def split_kind(text: str) -> tuple[str, str]:
    """``(KIND, rest)`` of a reference, options unread; ``KIND`` '' when none is written.

    >>> split_kind("prompt:smollm2?prompt=a.txt"), split_kind("./x:y"), split_kind("C:/m")
    (('prompt', 'smollm2?prompt=a.txt'), ('', './x:y'), ('', 'C:/m'))
    """
    prefix, sep, rest = text.partition(":")
    if sep and len(prefix) > 1 and "/" not in prefix and not prefix.startswith("."):
        return prefix, rest
    return "", text


def without_options(text: str) -> str:
    """The reference before its ``?options``, unread.

    >>> without_options("causal:./m?beam=8"), without_options("smollm2")
    ('causal:./m', 'smollm2')
    """
    return text.partition("?")[0]


def refuse_spaces(text: str, parameter: str) -> None:
    """Refuse spaces around a reference: ``' fake:j'`` reads as an unknown kind, ``'m '`` as a second
    model beside ``'m'`` (and its results under another key).

    >>> refuse_spaces(" fake:j", "judges")
    Traceback (most recent call last):
    nlibias.errors.ConfigError: judges ' fake:j' has spaces around the model reference; remove them ('fake:j')
    """
    if text != text.strip():
        raise ConfigError(
            f"{{{parameter}}} {text!r} has spaces around the model reference; remove them ({text.strip()!r})",
            parameter=parameter,
        )


@dataclass(frozen=True)
class ModelRef:
    """One model reference: ``kind`` ('' when none), ``name`` and its ``?options`` in written order."""

    kind: str
    name: str
    option_items: tuple[tuple[str, str], ...] = ()

    @classmethod
    def parse(
        cls, text: str, *, parameter: str = "model", allowed: Collection[str] | None = None
    ) -> ModelRef:
        """Read ``text``; ``allowed``: the option keys it may carry (``None``: any).

        >>> ModelRef.parse("m?x=1", parameter="model", allowed={"prompt"})
        Traceback (most recent call last):
        nlibias.errors.ConfigError: 'm?x=1': unknown option 'x' (known: prompt)
        """
        refuse_spaces(text, parameter)
        base, options = _split_options(text, allowed, parameter=parameter)
        kind, name = split_kind(base)
        return cls(kind, name, tuple(options.items()))

    @classmethod
    def unread(cls, text: str) -> ModelRef:
        """Its kind and name, ``?options`` left in the name; never refuses.

        >>> ModelRef.unread("prompt:smollm2?prompt=a.txt")
        ModelRef(kind='prompt', name='smollm2?prompt=a.txt', option_items=())
        """
        return cls(*split_kind(text))

    @classmethod
    def named(cls, text: str) -> ModelRef:
        """Its kind and name, ``?options`` dropped unread; never refuses.

        >>> ModelRef.named("causal:./m?beam=8")
        ModelRef(kind='causal', name='./m', option_items=())
        """
        return cls(*split_kind(without_options(text)))

    @property
    def options(self) -> Mapping[str, str]:
        return MappingProxyType(dict(self.option_items))

    @property
    def base(self) -> str:
        """The reference without its options (``KIND:NAME`` or ``NAME``)."""
        return f"{self.kind}:{self.name}" if self.kind else self.name

    @property
    def is_fake(self) -> bool:
        """``fake`` or ``fake:NAME``."""
        return self.kind == "fake" or (not self.kind and self.name == "fake")

    @property
    def is_server(self) -> bool:
        """Whether it names a model behind an OpenAI-compatible server."""
        return self.kind in SERVER_KINDS

    @property
    def loads_weights_here(self) -> bool:
        """Whether the model's weights load in this process (so that a dtype applies to it).

        >>> ModelRef.unread("gpt2").loads_weights_here, ModelRef.unread("fake:g").loads_weights_here
        (True, False)
        """
        return not self.is_fake and not self.is_server

    @property
    def server(self) -> tuple[str, str] | None:
        """``(base URL, model)`` of ``openai:URL#MODEL``; ``None`` when it names no served model."""
        url, _, model = self.name.partition("#")
        if not self.is_server or not url.startswith(("http://", "https://")) or not model:
            return None
        return url, model

    @property
    def is_gguf(self) -> bool:
        """Whether the model is read from a GGUF file (the embedded ``smollm2`` or a ``.gguf`` path).

        >>> ModelRef.unread("smollm2").is_gguf, ModelRef.unread("gguf:./m.GGUF").is_gguf, ModelRef.unread("org/lm").is_gguf
        (True, True, False)
        """
        return self.name in GENERATIVE_ALIASES or self.name.lower().endswith(".gguf")

    @property
    def pinned(self) -> tuple[str, str | None]:
        """``(name, revision)`` of ``NAME@REV`` (a path's ``@`` counts in its last part only).

        >>> ModelRef.unread("org/lm@v1").pinned, ModelRef.unread("./a@b/m").pinned, ModelRef.unread("~/m@v2").pinned
        (('org/lm', 'v1'), ('./a@b/m', None), ('~/m', 'v2'))
        """
        if self.name.startswith(("~", ".", "/")):
            if "@" not in Path(self.name).name:
                return self.name, None
            name, _, revision = self.name.rpartition("@")
        else:
            name, _, revision = self.name.partition("@")
        return name, revision or None

    @property
    def local_path(self) -> str | None:
        """The local path the reference can only mean (kind and ``@revision`` dropped), or
        ``None`` when it may be a hub id (or names a server, the fake, ...).

        >>> [ModelRef.parse(s).local_path for s in ("causal:./models/x?beam=4", "bert-base-cased", "mlm:~/m@v1")]
        ['./models/x', None, '~/m']
        >>> [ModelRef.parse(s).local_path for s in ("runs/a/model", "org/name", "openai:http://h:8000/v1#m")]
        ['runs/a/model', None, None]
        >>> [ModelRef.parse(s).local_path for s in ("hf:./no/such", "hf:org/name", "fake:/a/b/c")]
        ['./no/such', None, None]
        >>> ModelRef.parse("prompt:./m/x?prompt=p.txt").local_path, ModelRef.parse("openai:https://h/v1#o/m/x").local_path
        (None, None)
        """
        loaded = self.kind in LOADER_KINDS
        base = ModelRef("", self.name if loaded else self.base).pinned[0]
        if base.startswith(("/", "./", "../", "~")) or base.lower().endswith(".gguf"):
            return base
        # a hub id is NAME or ORG/NAME; a server's URL, the fake and prompt:... are no paths either
        if (loaded or not self.kind) and "://" not in base and ("\\" in base or base.count("/") > 1):
            return base
        return None

    @property
    def missing_path(self) -> str | None:
        """Why a name names nothing: a local path that does not exist, an empty ``@`` revision, a
        ``gguf:`` folder (``None``: no problem).

        >>> ModelRef.named("./no/such/model").missing_path
        'the local path ./no/such/model does not exist (no such file or directory; check the path, or name a hub model as org/name)'
        >>> ModelRef.named("org/name").missing_path is None, ModelRef.named("org/name@").missing_path
        (True, "no revision after '@' (give a revision after @, or leave @ out)")
        """
        if not self.is_server and not self.is_fake and self.name.endswith("@"):
            return "no revision after '@' (give a revision after @, or leave @ out)"
        path = self.local_path
        if self.kind == "gguf" and path is not None and Path(path).expanduser().is_dir():
            role = ModelRef("", path).role
            whose = f" ({_ROLE_WORDS[role]}'s, by its config.json)" if role else ""
            return f"{path} is a folder{whose}, not a GGUF file (name a .gguf file, or leave gguf: out)"
        if path is None or Path(path).expanduser().exists():
            return None
        return (
            f"the local path {path} does not exist "
            "(no such file or directory; check the path, or name a hub model as org/name)"
        )

    @property
    def role(self) -> Role | None:
        """What it names, read from its kind, an alias or a local or cached ``config.json``; None: unknown.

        >>> ModelRef.unread("smollm2").role, ModelRef.unread("prompt:smollm2").role
        ('generative', 'classifier')
        >>> ModelRef.unread("fake:j").role, ModelRef.unread("org/model").role, ModelRef.unread("m.gguf").role
        (None, None, 'generative')
        """
        if self.is_fake:
            return None
        if self.kind in _ROLE_KINDS:
            return _ROLE_KINDS[self.kind]
        if not self.kind and self.is_gguf:  # the embedded SmolLM2, a .gguf file: read as causal LMs only
            return "generative"
        name = self.pinned[0]
        local = Path(name).expanduser()
        if local.exists():
            return _architecture_role(local / "config.json")
        return next(filter(None, map(_architecture_role, _hub_cached_configs(name))), None)

    @property
    def is_checkpoint(self) -> bool:
        """Whether it names a Hugging Face checkpoint alone, as ``from_pretrained`` reads it: a hub
        name or a model directory (no ``KIND:`` prefix, no GGUF file, not the fake).

        >>> [ModelRef.unread(s).is_checkpoint for s in ("roberta-base", "./m", "hf:m", "gguf:m.gguf", "fake")]
        [True, True, False, False, False]
        """
        return not self.kind and not self.is_gguf and not self.is_fake

    def _not_checkpoint(self) -> str | None:
        """What it names instead of a checkpoint, in words; ``None``: it is one."""
        if self.is_checkpoint or self.is_fake:
            return None if self.is_checkpoint else "the fake model"
        found = (
            _ROLE_KINDS.get(self.kind)
            or _PREFIX_ROLES.get(self.kind)
            or ("generative" if self.is_gguf else None)
        )
        if found is None:
            return f"named with a {self.kind}: prefix"
        gguf = " (a GGUF file)" if self.is_gguf and self.kind in ("", "gguf") else ""
        return _ROLE_WORDS[found] + gguf + (f" by its {self.kind}: prefix" if self.kind else "")

    def other_role(self, role: Role) -> Role | None:
        """The role it names other than ``role`` (its own, else its prefix's); ``None``: no other.

        >>> ModelRef.unread("mlm:org/m").other_role("classifier"), ModelRef.unread("mlm:org/m").other_role("masked")
        ('masked', None)
        """
        found = self.role
        if found in (None, role):
            found = _PREFIX_ROLES.get(self.kind)
        return None if found == role else found

    def check_role(self, role: Role, *, parameter: str, fix: str, names: tuple[str, ...] = ()) -> None:
        """Refuse the reference where it is asked as ``role`` and names the other kind of model.

        >>> ModelRef.unread("smollm2").check_role("classifier", parameter="judges", fix="name it in lm_judge")
        Traceback (most recent call last):
        nlibias.errors.ConfigError: judges takes an NLI classifier, and 'smollm2' is a generative LM (name it in lm_judge)
        """
        refuse_spaces(str(self), parameter)
        if role == "checkpoint":  # any head loads: what from_pretrained cannot read alone is refused
            what = self._not_checkpoint()
        else:
            found = self.other_role(role)
            by = f" by its {self.kind}: prefix" if found is not None and found != self.role else ""
            what = None if found is None else _ROLE_WORDS[found] + by
        if what is not None:
            raise ConfigError(
                f"{{{parameter}}} takes {_ROLE_WORDS[role]}, and {str(self)!r} is {what} ({fix})",
                parameter=parameter,
                names=names,
            )

    def named_for(self, kinds: Collection[str]) -> str:
        """The name alone when the kind is one of ``kinds``, else the whole reference.

        >>> ModelRef.unread("mlm:./m").named_for(MASKED_LM_KINDS), ModelRef.unread("gpt2").named_for(("hf",))
        ('./m', 'gpt2')
        """
        return self.name if self.kind in kinds else str(self)

    def __str__(self) -> str:
        query = "&".join(f"{key}={value}" for key, value in self.option_items)
        return f"{self.base}?{query}" if query else self.base


def split_fill_spec(spec: str) -> tuple[FillKind, str]:
    """Which kind of fill a spec names, and the spec without its kind prefix; no prefix:
    ``smollm2``, ``.gguf`` and causal ``config.json``'s are causal, else a masked LM.

    >>> split_fill_spec("fake:x")[0], split_fill_spec("masked:./bert")
    ('fake', ('masked', './bert'))
    >>> split_fill_spec("openai:http://127.0.0.1:8080/v1#m")
    ('causal', 'openai:http://127.0.0.1:8080/v1#m')
    """
    ref = ModelRef.unread(spec)
    if ref.kind in ("causal", "gguf"):
        return "causal", ref.name
    if ref.kind in ("masked", "mlm"):
        return "masked", ref.name
    if ref.is_server or ref.is_fake:
        return ("causal" if ref.is_server else "fake"), spec
    base = without_options(spec)
    causal = ModelRef("", base).is_gguf or ModelRef.unread(base).role == "generative"  # its config.json
    return ("causal" if causal else "masked"), spec


def same_fill(spec: str, other: str) -> bool:
    """Whether two fill specs name one fill: the same filler kind and reference, however spelt (a
    ``causal:``/``gguf:``, ``masked:``/``mlm:`` or ``hf:`` prefix the kind implies, options in any
    order, one local path written two ways).

    >>> same_fill("smollm2", "causal:smollm2"), same_fill("mlm:bert?x=1&y=2", "hf:bert?y=2&x=1")
    (True, True)
    >>> same_fill("smollm2", "causal:smollm2?beam=8"), same_fill("bert", "causal:bert")
    (False, False)
    """
    return _fill_identity(spec) == _fill_identity(other)


def _fill_identity(spec: str) -> tuple[FillKind, ModelRef]:
    """The filler kind and its reference: no ``hf:``, options sorted, an existing local path resolved."""
    kind, target = split_fill_spec(spec)
    ref = ModelRef.parse(target)
    name, path = ref.name, ref.local_path
    if path is not None and Path(path).expanduser().exists():
        name = str(Path(path).expanduser().resolve()) + name.removeprefix(path)  # its @REV kept
    return kind, ModelRef("" if ref.kind == "hf" else ref.kind, name, tuple(sorted(ref.option_items)))


def fill_kind_problem(spec: str) -> str | None:
    """Why no filler reads ``spec``'s kind, or the classifier its ``config.json`` names (``None``: one does).

    >>> fill_kind_problem("prompt:smollm2")
    "unknown fill model kind 'prompt' in 'prompt:smollm2' (a prompted LM is a filter model). Known: causal, gguf, masked, mlm, hf, fake, openai, openai-completions"
    >>> fill_kind_problem("causal:smollm2") is None, fill_kind_problem("org/model") is None
    (True, True)
    """
    ref = ModelRef.unread(spec)
    if ref.kind and ref.kind not in FILL_KINDS:
        note = " (a prompted LM is a filter model)" if ref.kind == "prompt" else ""
        return f"unknown fill model kind {ref.kind!r} in {spec!r}{note}. Known: {', '.join(FILL_KINDS)}"
    if ref.role == "classifier":  # its config.json's architecture
        return (
            f"{spec!r} is an NLI classifier (a sequence-classification architecture in its config.json), "
            "not a masked LM or a causal LM to fill with: name a masked LM (e.g. bert-base-cased) or a causal LM (causal:NAME); "
            "a classifier filters as one of filter.models"
        )
    return None


def model_config(config: Path) -> dict[str, Any] | None:
    """A model's ``config.json`` as an object; None when it cannot be read or holds no object,
    refused (a SourceError with its line) when it is not JSON or gives a key twice, which
    ``from_pretrained`` would read as the last.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "config.json"
    >>> _ = path.write_text('{"architectures": ["BertForMaskedLM"],\\n "architectures": ["GPT2LMHeadModel"]}')
    >>> model_config(path)
    Traceback (most recent call last):
    nlibias.errors.SourceError: ...config.json:2: field architectures: the key appears twice in one object; JSON keeps only the last (keep one)
    """
    try:
        data = config.read_bytes()
    except OSError:
        return None
    loaded = parse_json(config, data, allow_nan=True)  # transformers writes NaN as json.dumps does
    return loaded if isinstance(loaded, dict) else None


def _architecture_role(config: Path) -> Role | None:
    """The role of the architecture a ``config.json`` records, if known."""
    loaded = model_config(config)
    if loaded is None:
        return None
    architectures = loaded.get("architectures") or []
    for architecture in architectures if isinstance(architectures, list) else []:
        for ending, role in _ARCHITECTURE_ROLES.items():
            if isinstance(architecture, str) and architecture.endswith(ending):
                return role
    return "generative" if loaded.get("is_decoder") is True else None  # a decoder named by no architecture


def _hub_cached_configs(repo: str) -> list[Path]:
    """The ``config.json`` of each cached revision of ``repo`` (never fetched)."""
    if repo.count("/") != 1:
        return []
    home = Path(os.environ.get("HF_HOME", Path.home() / ".cache" / "huggingface"))
    cache = Path(os.environ.get("HF_HUB_CACHE", home / "hub")).expanduser()
    return sorted((cache / f"models--{repo.replace('/', '--')}" / "snapshots").glob("*/config.json"))


def _split_options(
    spec: str, allowed: Collection[str] | None, *, parameter: str
) -> tuple[str, dict[str, str]]:
    base, sep, query = spec.partition("?")
    options: dict[str, str] = {}
    problem = None
    for part in query.split("&") if sep else ():
        key, eq, value = (text.strip() for text in part.partition("="))
        if not eq or not key or not value:
            problem = "options look like NAME?key=value&key=value"
        elif allowed is not None and key not in allowed:
            problem = f"unknown option {key!r} (known: {', '.join(sorted(allowed))})"
        elif key in options:
            problem = f"option {key!r} is given twice"
        else:
            options[key] = value
            continue
        break
    if problem is None and sep and not base:
        problem = "the model name is missing before '?'"
    if problem is not None:
        raise ConfigError(f"{spec!r}: {problem}", parameter=parameter)
    return (base if sep else spec), options
