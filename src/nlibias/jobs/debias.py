"""``nlibias debias``: paper 004's whole experiment in one call, each step skipped when done.

augment the training set → fine-tune each model on the original and on the augmented set →
expand the occupation samples → audit every fine-tuned model → compare before and after. The
steps write into ``OUT/``: ``augmented/``, ``models/<name>-base/`` and ``models/<name>-aug/``,
``occupations/``, ``audit/`` (with ``debias_comparison.json``). Run it again after a kill: a
finished step is skipped (the augmentation when its summary names the same source data and
options, a fine-tune when its ``finetune.json`` exists) and an unfinished fine-tune resumes from
its checkpoint; the audit's predictions come from the prediction cache.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nlibias.debias.augment import SUMMARY_FILE, augment_gender_swap
from nlibias.debias.finetune import RECORD_FILE, finetune
from nlibias.debias.training_rows import source_digest
from nlibias.debias.wordlists import swap_list_named
from nlibias.errors import ConfigError
from nlibias.jobs.debias_compare import DebiasComparison, compare_debiasing
from nlibias.jobs.expand import expand_samples
from nlibias.jobs.run import run_audit


def _augmented(train: str | Path, out: Path, augment_options: dict[str, Any], progress: bool) -> Path:
    summary_path = out / SUMMARY_FILE
    if summary_path.is_file():
        done = json.loads(summary_path.read_text(encoding="utf-8"))
        wanted = {
            "source_sha256": source_digest(train),
            "select": augment_options.get("select", "occupation"),
            "word_list_sha256": swap_list_named(augment_options.get("word_list", "winobias")).digest(),
        }
        if all(done.get(k) == v for k, v in wanted.items()) and done.get("source_sha256") is not None:
            return out
    augment_gender_swap(train, out, progress=progress, **augment_options)
    return out


def model_dir_name(model: str) -> str:
    """A model's folder name under ``OUT/models``.

    >>> model_dir_name("FacebookAI/roberta-base"), model_dir_name("/tmp/my model/")
    ('roberta-base', 'my_model')
    """
    return model.rstrip("/").rsplit("/", 1)[-1].replace(" ", "_")


def run_debias(
    models: Sequence[str],
    train: str | Path,
    out_dir: str | Path,
    *,
    eval_path: str | Path | None = None,
    premises: str | Path | None = None,
    augment_options: dict[str, Any] | None = None,
    finetune_options: dict[str, Any] | None = None,
    audit_options: dict[str, Any] | None = None,
    bootstrap: int = 1000,
    progress: bool = True,
) -> DebiasComparison:
    """Augment ``train``, fine-tune each of ``models`` on it and on the original, audit all on the
    occupation samples (``premises``: your premise file; default: the shipped one), compare."""
    if not models:
        raise ConfigError("no model given: pass one or more models to fine-tune", parameter="models")
    names = [model_dir_name(m) for m in models]
    if len(set(names)) != len(names):
        raise ConfigError(f"models with the same folder name: {', '.join(names)}", parameter="models")
    out = Path(out_dir)
    augmented = _augmented(train, out / "augmented", dict(augment_options or {}), progress)
    pairs = []
    for model, name in zip(models, names, strict=True):
        trained = []
        for suffix, data in (("base", train), ("aug", augmented)):
            target = out / "models" / f"{name}-{suffix}"
            if not (target / RECORD_FILE).is_file():
                finetune(
                    model, data, target, eval_path=eval_path, progress=progress, **(finetune_options or {})
                )
            trained.append(str(target))
        pairs.append((trained[0], trained[1]))
    samples = out / "occupations"
    if not (samples / "samples.jsonl").is_file():
        expand_samples("occupations", premises, out_dir=samples)
    audited = [m for pair in pairs for m in pair]
    run_audit(
        samples,
        audited,
        out_dir=out / "audit",
        bootstrap=bootstrap,
        progress=progress,
        **(audit_options or {}),
    )
    return compare_debiasing(out / "audit", pairs, bootstrap=bootstrap)
