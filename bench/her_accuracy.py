"""How often the gender swap reads "her" right: the rule (today's and earlier) and the ``lm`` choice.

The measure is two hand-labelled sets (category, sentence, the swapped sentence written by hand):
``tests/fixtures/her_sentences.tsv`` (``dev``, 195 sentences, written first and looked at while the
rule's cues were written, so the rule's number there is optimistic) and
``tests/fixtures/her_sentences_heldout.tsv`` (``held-out``, 66 sentences written after the rule and
the ``lm`` choice were fixed). Two accuracies:

* **sentences**: the swapped sentence equals the hand-written one exactly (every word: "her",
  "his", "(s)he", "man-made", ...);
* **her**: per "her" of the source, the word the swap put in its place equals the hand-written
  one (words are aligned by position: the swap replaces a word by one word).

Ways: ``rule`` (the default swap rule), ``rule-v0`` (the rule before issue #27: "her" read from
the next word alone; numbers recorded, not rerun: it is gone from the code), and ``lm`` with each
``--model`` given (``smollm2``; ``mlm:NAME`` for a masked LM) two ways: the model reads the "her"s
no cue decided (what ``her="lm"`` does), and, for comparison, those a cue decided too. Writes
``bench/results/her_accuracy.json`` and prints a Markdown table.

    python bench/her_accuracy.py                      # rule + SmolLM2 (about a minute on 2 cores)
    python bench/her_accuracy.py --model smollm2 --model mlm:bert-base-uncased
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections import Counter
from pathlib import Path
from typing import Any

import _common as common

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures"
SETS = {"dev": FIXTURES / "her_sentences.tsv", "held-out": FIXTURES / "her_sentences_heldout.tsv"}
"""``dev``: written first, and looked at while the rule's cues were written (its rule numbers are
optimistic); ``held-out``: written after the rule and the ``lm`` choice were fixed, run once."""
SET = SETS["dev"]
_WORDS = re.compile(r"[^\W\d_]+")
Rows = list[tuple[str, str, str]]

# The rule as it was before issue #27 (commit f6338ad's swap.py), scored the same way.
RULE_V0 = {
    "dev": {"sentences": 116, "sentences_total": 195, "her": 113, "her_total": 181},
    "held-out": {"sentences": 33, "sentences_total": 66, "her": 36, "her_total": 65},
}


def read_set(path: Path = SET) -> Rows:
    """``(category, sentence, expected)`` rows of the hand-labelled set."""
    lines = path.read_text(encoding="utf-8").splitlines()
    rows = [tuple(line.split("\t")) for line in lines[1:] if line.strip()]
    assert all(len(r) == 3 for r in rows), "three tab-separated fields per row"
    return rows  # type: ignore[return-value]


def score(rows: Rows, outputs: list[str]) -> dict[str, Any]:
    """Sentence and per-"her" accuracy of ``outputs`` against the hand-written sentences."""
    exact = her = her_total = 0
    per_category: Counter[str] = Counter()
    wrong = []
    for (category, sentence, expected), output in zip(rows, outputs, strict=True):
        per_category[category + " total"] += 1
        if output == expected:
            exact += 1
            per_category[category] += 1
        else:
            wrong.append({"category": category, "sentence": sentence, "got": output, "expected": expected})
        source, got, want = _WORDS.findall(sentence), _WORDS.findall(output), _WORDS.findall(expected)
        for i, word in enumerate(source):
            if word.lower() == "her":
                her_total += 1
                her += len(got) == len(source) and got[i] == want[i]
    return {
        "sentences": exact,
        "sentences_total": len(rows),
        "her": her,
        "her_total": her_total,
        "per_category": dict(sorted(per_category.items())),
        "wrong": wrong,
    }


def run(models: list[str], device: str | None) -> dict[str, Any]:
    from nlibias.debias.swap import CUE, DEFAULT, HerResolver, Swapper
    from nlibias.debias.wordlists import winobias_list

    swapper = Swapper(winobias_list())
    results: dict[str, Any] = {}
    for name, path in SETS.items():
        rows = read_set(path)
        results[name] = {"rule-v0 (before #27)": RULE_V0[name]}
        start = time.perf_counter()
        results[name]["rule"] = score(rows, [swapper.swap(s)[0] for _, s, _ in rows])
        results[name]["rule"]["seconds"] = time.perf_counter() - start
    for spec in models:
        loaded = time.perf_counter()
        resolver = HerResolver.load(spec, device=device)
        load_seconds = time.perf_counter() - loaded
        for name, path in SETS.items():
            for open_her in ((DEFAULT,), (CUE, DEFAULT)):
                result = _lm(read_set(path), swapper, resolver, open_her, load_seconds)
                results[name][_way(spec, open_her)] = result
    return results


def _way(spec: str, open_her: tuple[str, ...]) -> str:
    return f"lm {spec}" + (" (cue-read her open too)" if len(open_her) > 1 else "")


def _lm(
    rows: Rows, swapper: Any, resolver: Any, open_her: tuple[str, ...], load_seconds: float
) -> dict[str, Any]:
    start = time.perf_counter()
    plans = [swapper.plan(s, open_her=open_her) for _, s, _ in rows]
    open_plans = [p for p in plans if p is not None and p.open]
    picks = dict(zip(map(id, open_plans), resolver.choose(open_plans), strict=True))
    outputs = [
        s if p is None else p.render(picks.get(id(p)))[0] for (_, s, _), p in zip(rows, plans, strict=True)
    ]
    result = score(rows, outputs)
    result.update(
        seconds=time.perf_counter() - start,
        load_seconds=load_seconds,
        open_texts=len(open_plans),
        open_her=sum(len(p.open) for p in open_plans),
        identity=dict(resolver.identity()),
    )
    return result


def table(results: dict[str, Any]) -> str:
    lines = ['| set | way | sentences exact | per "her" |', "|---|---|---|---|"]
    for name, ways in results.items():
        for way, r in ways.items():
            s = f"{r['sentences']}/{r['sentences_total']} = {100 * r['sentences'] / r['sentences_total']:.1f}%"
            h = f"{r['her']}/{r['her_total']} = {100 * r['her'] / r['her_total']:.1f}%"
            lines.append(f"| {name} | {way} | {s} | {h} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="append", help="her model (default: smollm2); repeat")
    parser.add_argument("--device", default=None)
    args = parser.parse_args()
    results = run(args.model or ["smollm2"], args.device)
    common.RESULTS_DIR.mkdir(exist_ok=True)
    out = common.RESULTS_DIR / "her_accuracy.json"
    out.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(table(results))
    for name, ways in results.items():
        for way, r in ways.items():
            for w in r.get("wrong", []):
                print(f"{name} {way}: [{w['category']}] {w['sentence']} -> {w['got']} (want {w['expected']})")


if __name__ == "__main__":
    main()
