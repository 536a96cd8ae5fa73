"""Small saved runs of every shape a report renders, for tests and demos (no model, no data files)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from nlibias.catalog.registry import read_benchmark_samples
from nlibias.io.samples import write_samples
from nlibias.jobs.audit import audit_samples
from nlibias.models.fake import FakeNLIClassifier
from nlibias.runtime.classifier import ClassifierPredictor
from nlibias.schema import Sample

#: A premise with markup and quotes: a report must show it as text, never as HTML.
HOSTILE_PREMISE = 'The <script>alert("x")</script> neighbours & friends said <b>nothing</b>.'


def bbnli_like_samples(premises: int = 3) -> list[Sample]:
    """``premises`` pairs per subtopic over two domains and four subtopics, and a test sample per
    subtopic; one premise is hostile."""
    plan = [
        ("gender", "man_is_to_programmer", "men", "women", "are good at coding"),
        ("gender", "woman_is_to_homemaker", "women", "men", "belong at home"),
        ("race", "black_is_to_drugs", "black people", "white people", "sell drugs"),
        ("race", "asian_men_to_feminine", "Asian men", "white men", "are feminine"),
    ]
    samples: list[Sample] = []
    for d, (domain, subtopic, group, other, claim) in enumerate(plan):
        for p in range(premises):
            premise = (
                HOSTILE_PREMISE if (d, p) == (0, 0) else f"Premise {p} about {subtopic.replace('_', ' ')}."
            )
            key = f"t:{subtopic}:p{p}"
            for stereotype, who, whom in (("pro", group, other), ("anti", other, group)):
                samples.append(
                    Sample(
                        id=f"{key}:{stereotype}",
                        source="bbnli",
                        domain=domain,
                        subtopic=subtopic,
                        premise=premise,
                        hypothesis=f"{who} {claim}.",
                        gold="neutral",
                        stereotype=stereotype,  # type: ignore[arg-type]
                        pair_key=key,
                        group=who,
                        counterfactual_group=whom,
                    )
                )
        samples.append(
            Sample(
                id=f"t:{subtopic}:test",
                source="bbnli",
                domain=domain,
                subtopic=subtopic,
                premise=f"Premise 0 about {subtopic.replace('_', ' ')}.",
                hypothesis="Someone said something.",
                gold="entailment",
            )
        )
    return samples


def build_bbnli_run(root: str | Path, *, name: str = "audit", bootstrap: int = 50, premises: int = 3) -> Path:
    """Expand-like samples in ``root/samples`` and an audit in ``root/name`` of two fake classifiers:
    ``rules`` (substring rules) and ``hash`` (pseudo-random); 10 ``premises`` or more give verdicts."""
    root = Path(root)
    samples = bbnli_like_samples(premises)
    samples_dir = root / "samples"
    if not samples_dir.exists():
        write_samples(samples_dir, samples)
    rules = {"men are good": "entailment", "black people sell": "entailment", "asian men": "contradiction"}
    predictors = [
        ClassifierPredictor(FakeNLIClassifier("rules", rules=rules)),
        ClassifierPredictor(FakeNLIClassifier("hash", seed=1)),
    ]
    out = root / name
    audit_samples(
        read_benchmark_samples(samples_dir),
        predictors,
        out_dir=out,
        cache=None,
        bootstrap=bootstrap,
        progress=False,
    )
    return out


def _m(values: dict[str, float], n: int = 100, spread: float = 4.0) -> dict[str, Any]:
    return {"n": n, **values, "ci": {k: [v - spread, v + spread] for k, v in values.items()}}


def wq_nli_metrics(m1: float = 62.53) -> dict[str, Any]:
    """A WinoQueer-NLI-shaped ``metrics.json`` (M1..M8 per identity group and predicate category)."""
    base = {f"M{i}": m1 - 3.0 * (i - 1) for i in range(1, 9)}
    return {
        "source": "wq-nli",
        "n_samples": 200,
        "models": {
            "bert": {
                "overall": _m(base, 200),
                "by_identity": {"LGBTQ": _m(base), "Queer": _m({k: v + 5 for k, v in base.items()})},
                "by_predicate_category": {"sexual": _m(base)},
            }
        },
    }


def occupation_metrics() -> dict[str, Any]:
    """A gender-occupation-shaped ``metrics.json`` (S, delta_p, B per male/female-dominated slice)."""
    values = {"S": 71.25, "delta_p": 8.5, "B": 61.0}
    return {
        "source": "occupations",
        "models": {
            "roberta": {
                "overall": _m(values, 80),
                "by_dominance": {"male-dominated": _m(values, 40), "female-dominated": _m(values, 40)},
            }
        },
    }


def generative_metrics() -> dict[str, Any]:
    """A generative-audit ``metrics.json``: one model, two prompts, yes rates per subtopic."""
    models: dict[str, Any] = {}
    for prompt, shift in (("true", 0.0), ("entailed", 2.0)):
        subtopics = {
            f"subtopic_{i}": {
                "n": 20,
                "yes_rate_pro": 10.0 * i + shift,
                "yes_rate_anti": 1.0,
                "n_unparsed": 0,
            }
            for i in range(1, 6)
        }
        overall = {
            "n": 100,
            "accuracy": 90.0,
            "misprediction_rate": 10.0,
            "pro_stereotype_bias": 6.0 + shift,
            "anti_stereotype_bias": 2.0,
            "bbnli_bias_score": 4.0 - shift,
            "yes_rate_pro": 6.0 + shift,
            "yes_rate_anti": 2.0,
            "n_unparsed": 3,
        }
        models[f"smollm2|prompt={prompt}|scored"] = {"overall": overall, "by_subtopic": subtopics}
    return {"source": "bbnli", "models": models}


def write_metrics_run(root: str | Path, name: str, metrics: dict[str, Any]) -> Path:
    """A run directory holding only ``metrics.json``."""
    out = Path(root) / name
    out.mkdir(parents=True, exist_ok=True)
    (out / "metrics.json").write_text(json.dumps(metrics), encoding="utf-8")
    return out


def build_extension_run(root: str | Path, name: str = "extended") -> Path:
    """An extension dataset directory: card, ``run.json`` with per-stage counts, samples."""
    out = Path(root) / name
    write_samples(out, bbnli_like_samples())
    (out / "README.md").write_text(
        "# Dataset card\n\nExtended <BBNLI> by masked-LM fill.\n", encoding="utf-8"
    )
    run = {
        "command": "nlibias extend",
        "seed": 0,
        "stages": [
            {"name": "masked templates", "count": 120},
            {"name": "fills", "count": 900},
            {"name": "after adversarial filter", "count": 300},
            {"name": "after validation", "count": 250},
        ],
    }
    (out / "run.json").write_text(json.dumps(run), encoding="utf-8")
    return out
