"""Bad inputs of ``nlibias explain`` (issue #36), part of the corpus of ``bad_input_cases``: a run
without generated answers, no run at all, a run whose samples file is gone."""

from __future__ import annotations

import shutil
from pathlib import Path

from bad_input_corpus import Base, Case, copy_samples
from nlibias.runtime.model_set import ModelSet
from nlibias.runtime.options import ModelOptions, RunOptions


def _explain(run: Path, *extra: str) -> list[str]:
    return ["explain", str(run), "--judge", "fake:j", "--no-cache", "--bootstrap", "0", *extra]


def _generated_run(d: Path, base: Base) -> tuple[Path, Path]:
    """A fake generator's generated answers over a copy of the base samples: (run, samples file)."""
    from nlibias.jobs.audit import run_audit

    samples = copy_samples(d, base, lambda lines: lines)
    run_audit(
        samples,
        ModelSet.of(generative=["fake:g"], prompts=["true"]),
        run=RunOptions(cache=False, bootstrap=0, progress=False),
        out_dir=d / "G",
        options=ModelOptions(mode="generated"),
    )
    return d / "G", samples


def explain_cases() -> list[Case]:
    found: list[Case] = []

    def classifier_run(d: Path, base: Base) -> tuple[list[str], str]:
        run = d / "run"
        shutil.copytree(base.run, run)
        return _explain(run), str(run / "predictions.jsonl")

    def no_run(d: Path, base: Base) -> tuple[list[str], str]:
        (d / "empty").mkdir()
        return _explain(d / "empty"), str(d / "empty")

    def samples_gone(d: Path, base: Base) -> tuple[list[str], str]:
        run, samples = _generated_run(d, base)
        samples.unlink()
        return _explain(run), "--samples"

    found.append(Case("explain/classifier-run", classifier_run))
    found.append(Case("explain/no-run", no_run))
    found.append(Case("explain/samples-gone", samples_gone))
    return found
