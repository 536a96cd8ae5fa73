"""Regression cases: the run directories that nlibias' main job writes on six inputs, kept as
fixtures so that a restructuring of the code cannot change a number unnoticed.

``python tests/regression_cases.py OUT_DIR [CASE ...]`` writes each case's normalised
``metrics.json`` and ``predictions.jsonl`` under ``OUT_DIR/CASE/``; the fixtures in
``tests/fixtures/regression/`` were written this way (see ``tests/test_regression_outputs.py``).
Only the command line is used, so the cases hold whatever the code behind it becomes.
Benchmark data is never copied: the samples are expanded from ``$NLIBIAS_DATA_DIR`` each time.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

# Run fields that change from run to run (clock, machine, temporary paths), dropped before comparing.
_VOLATILE = {
    "finished",
    "platform",
    "python",
    "torch",
    "transformers",
    "nlibias",
    "cache",
    "samples",
    "predictions",
    "wall_seconds",
    "seconds",
    "pairs_per_second",
    "answers_per_second",
    "samples_per_second",
    "tokens_per_second",
    "model_path",
    "path",
    "file_sha256",
    # run statistics added after the fixtures were written (checked by tests/test_cache_values.py)
    "cache_rejected",
    "truncated_pairs",
}


def normalised(value: Any) -> Any:
    """``metrics.json`` without the fields that change between runs of the same command."""
    if isinstance(value, dict):
        return {k: normalised(v) for k, v in value.items() if k not in _VOLATILE}
    if isinstance(value, list):
        return [normalised(v) for v in value]
    return value


def _cli(*args: str) -> str:
    from typer.testing import CliRunner

    from nlibias.cli.main import app

    result = CliRunner().invoke(app, list(args))
    if result.exit_code != 0:
        raise RuntimeError(
            f"nlibias {' '.join(args)} failed ({result.exit_code}):\n{result.output}"
        ) from result.exception
    return result.output


def _subset(run: Path, out: Path, keep: Callable[[int, dict[str, Any]], bool]) -> Path:
    """A samples directory with the lines of ``run``'s samples.jsonl that ``keep`` accepts."""
    out.mkdir(parents=True, exist_ok=True)
    lines = (run / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    kept = [line for i, line in enumerate(lines) if keep(i, json.loads(line))]
    (out / "samples.jsonl").write_text("\n".join(kept) + "\n", encoding="utf-8")
    return out


def _audit_and_score(work: Path, samples: Path, *models: str, bootstrap: str = "50") -> dict[str, Path]:
    audit = work / "audit"
    _cli("audit", "--samples", str(samples), *models, "--out", str(audit), "--no-cache",
         "--bootstrap", bootstrap, "--quiet")  # fmt: skip
    score = work / "score"
    _cli("score", "--samples", str(samples), "--predictions", str(audit / "predictions.jsonl"),
         "--out", str(score), "--bootstrap", bootstrap)  # fmt: skip
    return {"audit": audit, "score": score}


def _bbnli(work: Path) -> Path:
    _cli("expand", "bbnli", "--out", str(work / "bbnli"))
    return work / "bbnli"


def case_bbnli_fake(work: Path) -> dict[str, Path]:
    return _audit_and_score(work, _bbnli(work), "--model", "fake:a", "--model", "fake:b")


def case_bbnli_tiny_hf(work: Path) -> dict[str, Path]:
    from nlibias.testing import bbnli_texts, build_tiny_nli_classifier

    model = build_tiny_nli_classifier(work / "tiny-nli", bbnli_texts(), seed=0)
    samples = _subset(_bbnli(work), work / "subset", lambda i, _: i % 7 == 0)
    return _audit_and_score(work, samples, "--model", str(model), "--device", "cpu")


def case_wq_nli(work: Path) -> dict[str, Path]:
    _cli("expand", "wq-nli", "--out", str(work / "wq"))
    samples = _subset(work / "wq", work / "subset", lambda i, _: i < 3000)
    return _audit_and_score(work, samples, "--model", "fake:a", "--model", "fake:b")


def case_occupations(work: Path) -> dict[str, Path]:
    _cli("expand", "occupations", "--out", str(work / "occ"))
    return _audit_and_score(work, work / "occ", "--model", "fake:a", "--model", "fake:b")


def case_extended(work: Path) -> dict[str, Path]:
    _cli("extend", "--out", str(work / "next"), "--cache", str(work / "c.sqlite"), "--mlm", "fake",
         "--filter-model", "fake:f", "--subtopic", "man_is_to_programmer", "--subtopic", "black_is_to_ghetto",
         "--unvalidated", "--no-progress", "--policy", "all")  # fmt: skip
    return _audit_and_score(work, work / "next" / "dataset", "--model", "fake:a", "--model", "fake:b")


def case_smollm2(work: Path) -> dict[str, Path]:
    pairs = {
        f"bbnli:{subtopic}:p00:c000:h{h}"
        for subtopic in ("man_is_to_programmer", "black_is_to_ghetto", "Muslim_man_to_oppressive")
        for h in (0, 1)
    }

    def keep(_: int, record: dict[str, Any]) -> bool:
        return record.get("pair_key") in pairs

    samples = _subset(_bbnli(work), work / "subset", keep)
    return _audit_and_score(work, samples, "--generative", "smollm2", "--prompt", "true",
                            "--prompt", "entailed", bootstrap="0")  # fmt: skip


def case_bbnli_generative_fake(work: Path) -> dict[str, Path]:
    """A fake classifier beside a fake generative LM asked with both prompt styles (its scored
    answers get the generative pair measures), on a quarter of BBNLI's pairs and test samples."""
    import zlib

    def keep(i: int, record: dict[str, Any]) -> bool:
        key = record.get("pair_key")
        return (zlib.crc32(key.encode()) if key else i) % 4 == 0

    samples = _subset(_bbnli(work), work / "subset", keep)
    return _audit_and_score(work, samples, "--model", "fake:a", "--generative", "fake:lm",
                            "--prompt", "true", "--prompt", "entailed")  # fmt: skip


def case_wq_nli_generative_fake(work: Path) -> dict[str, Path]:
    """A fake generative LM's scored answers on WinoQueer-NLI (they get M1-M8 from their probabilities)."""
    _cli("expand", "wq-nli", "--out", str(work / "wq"))
    samples = _subset(work / "wq", work / "subset", lambda i, _: i < 600)
    return _audit_and_score(work, samples, "--generative", "fake:lm", "--prompt", "true")


CASES: dict[str, Callable[[Path], dict[str, Path]]] = {
    "bbnli-fake": case_bbnli_fake,
    "bbnli-tiny-hf": case_bbnli_tiny_hf,
    "wq-nli": case_wq_nli,
    "occupations": case_occupations,
    "extended": case_extended,
    "smollm2": case_smollm2,
    "bbnli-generative-fake": case_bbnli_generative_fake,
    "wq-nli-generative-fake": case_wq_nli_generative_fake,
}
EXACT = {"bbnli-fake", "wq-nli", "occupations", "extended", "bbnli-generative-fake", "wq-nli-generative-fake"}
"""Cases whose probabilities come from pure Python (byte-identical on any machine); the others
run a model, whose last bits may differ between CPUs."""


def run_case(name: str, work: Path) -> dict[str, dict[str, Any]]:
    """Each output directory's normalised metrics and predictions lines, by output name."""
    outputs = CASES[name](work)

    def text(path: Path) -> str:  # model paths under the temporary work dir named the same each run
        return path.read_text(encoding="utf-8").replace(str(work), "WORK")

    return {
        label: {
            "metrics": normalised(json.loads(text(out / "metrics.json"))),
            "predictions": text(out / "predictions.jsonl"),
        }
        for label, out in outputs.items()
    }


def main() -> None:
    import tempfile

    out = Path(sys.argv[1])
    names = sys.argv[2:] or list(CASES)
    for name in names:
        with tempfile.TemporaryDirectory() as tmp:
            results = run_case(name, Path(tmp))
        for label, result in results.items():
            target = out / name / label
            target.mkdir(parents=True, exist_ok=True)
            (target / "metrics.json").write_text(
                json.dumps(result["metrics"], indent=1, sort_keys=True) + "\n", encoding="utf-8"
            )
            (target / "predictions.jsonl").write_text(result["predictions"], encoding="utf-8")
        print(f"{name}: written under {out / name}")


if __name__ == "__main__":
    main()
