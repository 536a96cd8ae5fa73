"""Export samples as an lm-evaluation-harness task (``nlibias export lm-eval``) asking a model what
a scored audit asks it, so that ``nlibias score`` reads lm-eval's log back into the same answers
(the whitespace lm-eval moves, and how it is cancelled: docs/integrations.md).

>>> task_name("bbnli", "true")
'nlibias_bbnli_true'
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from annotated_types import Predicate

from nlibias.catalog.registry import benchmark_for_source, read_checked_samples
from nlibias.errors import ConfigError
from nlibias.integrations.offline import local_causal_lm, model_dir
from nlibias.io.atomic import atomic_write_text, locked_folder, write_json, write_jsonl
from nlibias.io.overwrites import refuse_overwrites
from nlibias.io.samples import resolve_samples_path
from nlibias.models.generative.defaults import OptionScore
from nlibias.models.generative.prompts import resolve_prompt_styles
from nlibias.schema.applies import option_applies_to_nothing
from nlibias.schema.declared import Allowed, PathArg, declared
from nlibias.schema.model_ref import ModelRef
from nlibias.schema.placement import Device

if TYPE_CHECKING:
    from nlibias.benchmarks.base import Benchmark

RUN_SCRIPT = "run_lm_eval.sh"
"""The lm_eval command line of the export (append ``--output_path DIR`` ...)."""
PRETRAINED_ENV = "NLIBIAS_LM_EVAL_PRETRAINED"
"""Read by ``run_lm_eval.sh``: the model directory lm_eval loads (default: the exported one)."""
METRICS_MODULE = "nlibias_metrics"
"""The task's ``process_results`` module, written beside its YAML (:data:`_METRICS_SOURCE`)."""


def task_name(source: str, prompt: str) -> str:
    """The default task name: ``nlibias_<source>_<prompt>`` with ``-`` and ``.`` as ``_``."""
    return "nlibias_" + f"{source}_{prompt}".replace("-", "_").replace(".", "_")


@dataclass(frozen=True)
class LmEvalExport:
    """What :func:`export_lm_eval` wrote."""

    out_dir: Path
    task: str
    """The task name to pass to ``lm_eval --tasks``."""
    n_docs: int
    chat_template: bool
    spellings: dict[str, list[str]]
    """Answer word → the choice texts that stand for it (empty for multiple-choice samples)."""
    command: str
    """The ``lm_eval`` command line (``run_lm_eval.sh``)."""


TaskName = Annotated[
    str,
    Predicate(re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]*").fullmatch),
    Allowed("a task name of letters, digits, _ and - (it names the task's files under --out)"),
]
"""A task name: it becomes file names under ``out_dir`` and lm-eval's ``--tasks``, so no path."""


def _pretrained(path: str | Path) -> bool:
    """Whether lm-eval's ``pretrained=`` can load ``path``: an existing directory, or a hub id
    (``NAME`` or ``ORG/NAME``, naming nothing here); never a file.

    >>> _pretrained("HuggingFaceTB/SmolLM2-135M-Instruct"), _pretrained("/no/such/model"), _pretrained(".")
    (True, False, True)
    """
    local = Path(path).expanduser()
    if local.exists():
        return local.is_dir()
    return ModelRef.named(str(path)).local_path is None and ":" not in str(path) and "@" not in str(path)


PretrainedPath = Annotated[
    PathArg,
    Predicate(_pretrained),
    Allowed("a model directory (or a hub id, org/name) that lm-eval's pretrained= loads, not a file"),
]


@declared
def export_lm_eval(
    samples: PathArg,
    out_dir: PathArg,
    *,
    prompt: str | None = None,
    model: str = "smollm2",
    task: TaskName | None = None,
    device: Device = "cpu",
    model_path: PretrainedPath | None = None,
    option_score: OptionScore = "total",
    **model_options: Any,
) -> LmEvalExport:
    """Write into ``out_dir`` an lm-eval task asking ``model`` (a local causal LM, loaded on
    ``device`` for its tokenizer and chat template) what a scored audit asks about ``samples``
    (``nlibias export lm-eval``).
    ``prompt``: one style (default: the benchmark's first); ``model_path``: the command's
    ``pretrained=`` (default: the model's directory or a GGUF model's dequantised copy)."""
    rows = read_checked_samples(samples)  # before the model loads
    benchmark = benchmark_for_source(rows[0].source)
    style = one_style(prompt, benchmark)
    if option_score != "total" and not style.choices:
        raise option_applies_to_nothing("option_score", "multiple-choice prompt styles", value=option_score)
    name = task or task_name(rows[0].source, style.name)
    out = Path(out_dir).resolve()
    written = [
        out / f for f in (f"{name}.jsonl", f"{name}.yaml", RUN_SCRIPT, f"{METRICS_MODULE}.py", "README.md")
    ]
    refuse_overwrites(
        {"out_dir": [*written, out / "nlibias_export.json"]},
        {
            "samples": resolve_samples_path(Path(samples)),
            "prompt": _files(style.origin),
            "model": _files(model),
        },
    )
    backend = local_causal_lm(model, device=device, **model_options)
    pairs = {} if style.choices else backend.answer_spellings(style.answers)
    spellings = {word: [text for text, _ in found] for word, found in pairs.items()}
    documents = _documents(backend, rows, style, option_score, pairs)
    pretrained = model_dir(backend) if model_path is None else str(model_path)
    extra_args = ",add_bos_token=False" if backend.chat else ""
    command = shlex.join(_lm_eval_argv(out, name, f"pretrained={pretrained}{extra_args}"))
    with locked_folder(out):  # another export into this folder at once: one's files, not a mix
        write_jsonl(written[0], documents)
        _write_script(written[2], name, pretrained, extra_args)
        atomic_write_text(written[3], _METRICS_SOURCE)
        _write_yaml(written[1], name, written[0], style.name, backend.name, backend.chat, option_score)
        atomic_write_text(written[4], _readme(name, backend.chat, command))
        write_json(
            out / "nlibias_export.json",
            {
                "task": name,
                "prompt": {"name": style.name, "template": style.template, "answers": list(style.answers)},
                "model": backend.name,
                "chat_template": backend.chat,
                "spellings": spellings,
                "option_score": option_score,
                "documents": len(documents),
                "samples": str(samples),
                "command": command,
            },
        )
    return LmEvalExport(out, name, len(documents), backend.chat, spellings, command)


def one_style(prompt: Any, benchmark: Benchmark) -> Any:
    """The one prompt style ``prompt`` names (a name or a prompt file; None: the benchmark's first;
    Inspect's ``-T prompt=true`` arrives as True), fit for ``benchmark``.

    >>> from nlibias.catalog.registry import get_benchmark
    >>> one_style(True, get_benchmark("bbnli")).name
    'true'
    """
    name = (
        (benchmark.prompt_styles or ("true",))[0] if prompt is None else "true" if prompt is True else prompt
    )
    styles = resolve_prompt_styles([name]) if isinstance(name, str) and name else None
    if styles is None or len(styles) != 1:
        given = (
            "use true, entailed or a prompt file"
            if styles is None
            else f"it names {len(styles)} prompt styles; give one"
        )
        raise ConfigError(f"{{prompt}} is {prompt!r}; {given}", parameter="prompt")
    benchmark.check_prompt_styles(styles)
    return styles[0]


def _files(given: str) -> list[Path]:
    """The files a path-like argument names: itself, or a directory's files (a model's)."""
    path = Path(given.removeprefix("hf:"))
    if given == "builtin" or not path.exists():  # a built-in prompt style, a model's name
        return []
    return [p for p in path.iterdir() if p.is_file()] if path.is_dir() else [path]


def _split(
    tokenizer: Any, backend: Any, text: str, tails: Sequence[str], expect: Sequence[list[int]] | None
) -> tuple[str, str, bool]:
    """A prompt's context (less the trailing whitespace lm-eval moves), that whitespace, and whether
    it has tokens of its own; refused unless prompt + each tail tokenizes as the prompt's tokens,
    then the tail's own (``expect``: these), as nlibias scores it."""
    full = backend.format_prompt(text)
    context = full.rstrip()
    encoded = tokenizer([context, full, *(full + t for t in tails)], add_special_tokens=not backend.chat)
    ctx, prompt, *wholes = (list(ids) for ids in encoded["input_ids"])
    for k, (tail, whole) in enumerate(zip(tails, wholes, strict=True)):
        own = whole[len(prompt) :]
        kept = whole[: len(prompt)] == prompt and prompt[: len(ctx)] == ctx
        if not (tail and own and kept and own == (own if expect is None else expect[k])):
            raise ConfigError(
                f"{tail!r} does not tokenize as {'its one token' if expect else 'its own tokens'} after the prompt "
                f"of {backend.name} ({text[:60]!r}...), so lm-eval would not score what nlibias scores",
                parameter="model",
            )
    return context, full[len(context) :], len(prompt) > len(ctx)


def _documents(
    backend: Any, rows: Sequence[Any], style: Any, option_score: str, spellings: dict[str, Any]
) -> list[dict[str, Any]]:
    """One document per sample: a multiple-choice sample's options, then the moved whitespace alone
    where it has tokens of its own; a yes/no sample's answer words' single-token spellings."""
    _, tokenizer = backend.load()
    spelled = [(word, text, token) for word, pairs in spellings.items() for text, token in pairs]
    words = [word for word, _, _ in spelled]
    split: dict[tuple[str, ...], tuple[str, str, bool]] = {}
    documents = []
    for sample in rows:
        options = list(sample.provenance["answers"]) if style.choices else [text for _, text, _ in spelled]
        text = style.render(sample.premise, sample.hypothesis, options if style.choices else ())
        if (key := (text, *options)) not in split:
            split[key] = _split(
                tokenizer, backend, text, options, None if style.choices else [[t] for *_, t in spelled]
            )
        context, moved, alone = split[key]
        doc = {
            "id": sample.id,
            "query": context,
            "choices": [moved + o for o in options],
            "prompt": style.name,
        }
        if style.choices:
            doc |= {
                "options": len(options),
                "target": int(sample.provenance["correct"]),
                "option_score": option_score,
            }
            doc["choices"] += [moved] if alone else []
        else:
            gold = [w for w in style.answers if style.labels[w] == sample.gold]
            # binary: contradiction is "no"
            target = gold[0] if gold else ("no" if "no" in words else words[0])
            doc |= {
                "choice_answers": words,
                "target": words.index(target),
                "answers": "/".join(style.answers),
            }
        documents.append(doc)
    return documents


def _lm_eval_argv(out: Path, name: str, model_args: str) -> list[str]:
    flags = ["--model", "hf", "--model_args", model_args, "--batch_size", "8", "--log_samples"]
    return ["lm_eval", "--include_path", str(out), "--tasks", name, *flags]


def _write_script(path: Path, name: str, pretrained: str, extra_model_args: str) -> None:
    """``run_lm_eval.sh``: the command, loading :data:`PRETRAINED_ENV`'s directory when set."""
    argv = [shlex.quote(a) for a in _lm_eval_argv(path.parent, name, "MODEL_ARGS")]
    argv[argv.index("MODEL_ARGS")] = f'"pretrained=${{PRETRAINED}}{extra_model_args}"'
    atomic_write_text(
        path,
        f"#!/usr/bin/env bash\n# {name}: add --output_path DIR (and any lm_eval flag)\n"
        f"# The model lm_eval loads: ${PRETRAINED_ENV} if set, else the directory the task was exported\n"
        "# with; it must hold the same model (the prompts hold its chat template and answer spellings).\n"
        f"PRETRAINED=${{{PRETRAINED_ENV}:-{shlex.quote(pretrained)}}}\n"
        f'exec {" ".join(argv)} "$@"\n',
    )
    path.chmod(0o755)


def choice_task(name: str, data_path: Path, metadata: dict[str, Any]) -> dict[str, Any]:
    """An lm-eval ``multiple_choice`` task over a JSONL file of documents (``query``, ``choices``
    without a delimiter, ``target`` index)."""
    return {
        "task": name,
        "dataset_path": "json",
        "dataset_kwargs": {"data_files": {"test": str(data_path)}},
        "test_split": "test",
        "output_type": "multiple_choice",
        "doc_to_text": "query",
        "doc_to_choice": "choices",
        "doc_to_target": "target",
        "target_delimiter": "",
        "metric_list": [{"metric": "acc", "aggregation": "mean", "higher_is_better": True}],
        "metadata": metadata,
    }


def _write_yaml(
    path: Path, name: str, data: Path, prompt: str, model: str, chat: bool, option_score: str
) -> None:
    import yaml

    metadata = {
        "version": 3.0,
        "nlibias_prompt": prompt,
        "nlibias_model": model,
        "nlibias_option_score": option_score,
    }
    header = (
        f"# Written by `nlibias export lm-eval` for {model} (prompt style {prompt!r}).\n"
        f"# The prompts {'include the chat template' if chat else 'are plain (no chat template)'}: "
        "run lm_eval WITHOUT --apply_chat_template.\n"
        "# acc: the answer word (its spellings summed) or option (option_score) nlibias reads: nlibias_metrics.py.\n"
        "# Score the answers with: nlibias score --samples RUN --predictions 'OUT/*/samples_<task>_*.jsonl'\n"
    )
    config = yaml.safe_dump(choice_task(name, data, metadata), sort_keys=False, allow_unicode=True)
    atomic_write_text(path, f"{header}{config}process_results: !function {METRICS_MODULE}.process_results\n")


def _readme(name: str, chat: bool, command: str) -> str:
    template = (
        "chat template applied by nlibias (run lm_eval without --apply_chat_template; add_bos_token=False)"
        if chat
        else "plain prompts (the model has no chat template)"
    )
    return (
        f"# lm-eval task `{name}` (written by nlibias export lm-eval)\n\nPrompts: {template}.\n\n"
        f"Run (`{RUN_SCRIPT}` holds this command; append any lm_eval flag):\n\n    {command} --output_path OUT\n\n"
        "Then score the logged answers with nlibias' measures:\n\n"
        f"    nlibias score --samples RUN --predictions 'OUT/*/samples_{name}_*.jsonl' --out SCORED\n\n"
        "(quoted: nlibias expands the pattern; keep the results_*.json lm_eval writes beside the samples\n"
        f"file, it says how many documents the run evaluated). `${PRETRAINED_ENV}` replaces the model\n"
        "directory the script loads.\n"
    )


_METRICS_SOURCE = '''"""lm-eval metrics of a task written by `nlibias export lm-eval`: acc is 1 when the answer
nlibias reads is the target (a yes/no word's spellings summed; an option's score less the moved
whitespace alone, in total or per byte).
"""

import math


def _loglikelihood(result):
    return float(result[0] if isinstance(result, (list, tuple)) else result)


def answer_word(doc, results):
    """The answer word whose spellings are most likely together (the first on a tie)."""
    lls = [_loglikelihood(r) for r in results]
    words = [w for w in str(doc["answers"]).split("/") if w in doc["choice_answers"]]

    def together(word):
        values = [ll for ll, w in zip(lls, doc["choice_answers"]) if w == word]
        return max(values) + math.log(sum(math.exp(v - max(values)) for v in values))

    return max(words, key=together) if words else None


def chosen_option(doc, results):
    """The option nlibias chooses from the log-likelihoods."""
    n, lls = doc["options"], [_loglikelihood(r) for r in results]
    scores = [ll - (lls[n] if len(lls) > n else 0.0) for ll in lls[:n]]
    if doc.get("option_score") == "per-byte":
        scores = [s / len(c.lstrip().encode("utf-8")) for s, c in zip(scores, doc["choices"])]
    return max(range(n), key=scores.__getitem__)


def process_results(doc, results):
    if "options" in doc:
        return {"acc": 1.0 if chosen_option(doc, results) == doc["target"] else 0.0}
    target = doc["choice_answers"][doc["target"]]
    return {"acc": 1.0 if answer_word(doc, results) == target else 0.0}
'''
"""The source of ``nlibias_metrics.py`` (self-contained: lm-eval runs it without nlibias)."""
