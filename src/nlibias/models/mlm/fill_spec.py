"""Which filler a fill spec names (causal LM, masked LM or the fake), from its prefix, its name,
or the model's ``config.json`` on disk.

>>> split_fill_spec("fake:x")[0], split_fill_spec("masked:./bert")
('fake', ('masked', './bert'))
>>> split_fill_spec("openai:http://127.0.0.1:8080/v1#m")
('causal', 'openai:http://127.0.0.1:8080/v1#m')
"""

from __future__ import annotations

from typing import Literal

from nlibias.schema.model_ref import LOADER_KINDS, SERVER_KINDS, ModelRef, without_options

FillKind = Literal["causal", "masked", "fake"]


def split_fill_spec(spec: str) -> tuple[FillKind, str]:
    """Which kind of fill a spec names, and the spec without its kind prefix; no prefix:
    ``smollm2``, ``.gguf`` and causal ``config.json``'s are causal, else a masked LM."""
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


#: The kinds a fill model may be written with.
FILL_KINDS = (*LOADER_KINDS, "fake", *SERVER_KINDS)


def pinned_in_name(target: str) -> bool:
    """Whether a causal fill's name pins its revision (``NAME@REV``).

    >>> pinned_in_name("org/lm@v1?beam=4"), pinned_in_name("smollm2?beam=4")
    (True, False)
    """
    return ModelRef.unread(without_options(target)).pinned[1] is not None


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
