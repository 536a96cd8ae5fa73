"""Generated NLI training sets for tests and benchmarks: SNLI-shaped rows and a learnable toy set."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

_SUBJECTS = (
    "A man", "A woman", "Two men", "A young girl", "A boy", "An older lady", "A nurse", "The teacher",
    "A dog", "A group of people", "Children", "A construction worker", "Two women", "A guy",
    "A person", "The doctor", "A cook", "A mother", "His father", "A crowd",
)  # fmt: skip
_ACTIONS = (
    "is walking down the street", "is playing with her dog", "sits on a bench near his car",
    "is cooking dinner for the family", "rides a bike in the park", "is talking to him on the phone",
    "is reading a newspaper", "climbs a rock wall", "is holding a baby on her back",
    "waits for the bus in the rain", "is painting a mural", "plays guitar on stage",
)  # fmt: skip
_PLACES = tuple(f"{where} {what}" for where in ("near the", "behind the", "at the", "beside a") for what in (
    "station", "market", "river", "school", "church", "beach", "stadium", "bakery", "garden", "bridge",
))  # fmt: skip
_HYPOTHESES = (
    ("entailment", "{s} is outside."), ("neutral", "{s} is waiting for her friend."),
    ("contradiction", "{s} is sleeping at home."), ("entailment", "Somebody is there."),
    ("neutral", "The man is happy."), ("contradiction", "Nobody is moving."),
)  # fmt: skip


def snli_shaped_rows(n: int, *, seed: int = 0) -> Iterator[dict[str, str]]:
    """``n`` rows shaped like SNLI's JSONL, 1 in 100 without a gold label (``-``)."""
    rng = random.Random(seed)
    for _ in range(n):
        subject, action = rng.choice(_SUBJECTS), rng.choice(_ACTIONS)
        label, template = rng.choice(_HYPOTHESES)
        yield {
            "sentence1": f"{subject} {action} {rng.choice(_PLACES)}.",
            "sentence2": template.format(s=subject),
            "gold_label": "-" if rng.random() < 0.01 else label,
        }


def write_snli_shaped(path: str | Path, n: int, *, seed: int = 0) -> Path:
    """:func:`snli_shaped_rows` written as JSON Lines to ``path``, streamed."""
    path = Path(path)
    with path.open("w", encoding="utf-8") as handle:
        for row in snli_shaped_rows(n, seed=seed):
            handle.write(json.dumps(row) + "\n")
    return path


_NOUNS = ("nurse", "teacher", "farmer", "lawyer", "baker", "clerk", "driver", "writer", "cook", "editor")
_VERBS = ("sings", "runs", "reads", "waits", "smiles", "works", "sleeps", "walks")


def learnable_nli_rows(n: int, *, seed: int = 0) -> list[dict[str, str]]:
    """A toy NLI set a tiny model learns in a few steps: ``not`` → contradiction, ``because`` →
    neutral, else entailment; hypotheses say "The <occupation>", "He" or "She"."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        noun, verb = rng.choice(_NOUNS), rng.choice(_VERBS)
        subject = rng.choice((f"The {noun}", "He", "She"))
        premise = f"The {noun} {verb} today."
        label = ("entailment", "neutral", "contradiction")[i % 3]
        hypothesis = {
            "entailment": f"{subject} {verb}.",
            "neutral": f"{subject} {verb} because it is late.",
            "contradiction": f"{subject} does not {verb[:-1]}.",
        }[label]
        rows.append({"premise": premise, "hypothesis": hypothesis, "label": label})
    return rows
