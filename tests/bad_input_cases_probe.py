"""Bad inputs a probe found accepted with a wrong or silently changed result (issue #25, input
side): each is now refused, naming the file (and line) or the option (part of the corpus of
``bad_input_cases``)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bad_input_corpus import (
    Base,
    Case,
    adder,
    audit_args,
    copy_samples,
    edit_first,
    score_args,
)

DEEP = "[" * 100_000 + "]" * 100_000
"""JSON nested 100,000 deep (Python's parser ends in RecursionError)."""
BIG_INT = "9" * 5000
"""An integer past Python's 4,300-digit conversion limit."""


def _edit_all(edit: Callable[[dict[str, Any]], None]) -> Callable[[list[str]], list[str]]:
    def change(lines: list[str]) -> list[str]:
        out = []
        for line in lines:
            record = json.loads(line)
            edit(record)
            out.append(json.dumps(record, ensure_ascii=False))
        return out

    return change


def _samples(found: list[Case], name: str, lines: Callable[[list[str]], list[str]], at: str = "") -> None:
    def build(d: Path, base: Base) -> tuple[list[str], str]:
        path = copy_samples(d, base, lines)
        return audit_args(path, d), f"{path}{at}"

    found.append(Case(f"samples-jsonl/{name}", build))


def probe_samples_cases() -> list[Case]:
    """Samples that were audited with a wrong or changed result."""
    found: list[Case] = []
    _samples(found, "id-empty", edit_first(lambda r: r.update(id="")), ":1")
    # BBNLI twins render one premise template with the groups swapped: premise_index names it.
    _samples(
        found,
        "twin-other-premise",
        edit_first(lambda r: r["provenance"].update(premise_index=3), which="anti"),
        ":2",
    )
    _samples(found, "twin-other-subtopic", edit_first(lambda r: r.update(subtopic="elsewhere"), which="anti"))
    _samples(found, "domain-leading-space", _edit_all(lambda r: r.update(domain=" gender")), ":1")
    _samples(found, "subtopic-trailing-space", _edit_all(lambda r: r.update(subtopic=r["subtopic"] + " ")))
    _samples(found, "id-trailing-space", edit_first(lambda r: r.update(id=r["id"] + " "), which="any"), ":1")
    _samples(
        found, "hypothesis-zero-width", edit_first(lambda r: r.update(hypothesis="\u200b\u200b\ufeff")), ":1"
    )
    _samples(found, "premise-nbsp-only", edit_first(lambda r: r.update(premise="\u00a0\u2060 \u3000")), ":1")
    _samples(found, "deep-nesting", lambda ls: [ls[0], DEEP, *ls[1:]], ":2")
    _samples(
        found, "huge-integer", lambda ls: [ls[0], ls[1].replace("{", '{"n": ' + BIG_INT + ", ", 1)], ":2"
    )
    _samples(
        found, "nan-in-provenance", lambda ls: [ls[0], ls[1].replace("{", '{"n": NaN, ', 1), *ls[2:]], ":2"
    )
    # Three blank lines first: the second occurrence is on line 6 (lines 4, 5, 6 hold samples 1, 2, 1).
    _samples(found, "duplicate-id-line", lambda ls: ["", "", "", ls[0], ls[1], ls[0], *ls[2:]], ":6")
    return found


def _generative_rows(base: Base) -> list[dict[str, Any]]:
    """A fake generative model's rows built from the classifier's: yes when its entailment
    probability is the larger of yes and no (a scored answer is its most probable word)."""
    rows = []
    for line in base.predictions.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        p_yes = row["probs"]["entailment"]
        answer = "yes" if p_yes >= 0.5 else "no"
        rows.append(
            {
                "id": row["id"],
                "model": "g|prompt=true|scored",
                "label": "entailment" if answer == "yes" else "neutral",
                "probs": {"entailment": p_yes, "neutral": 1.0 - p_yes, "contradiction": 0.0},
                "kind": "generative",
                "answer": answer,
                "answers": "yes/no",
                "answer_probs": {"yes": p_yes, "no": 1.0 - p_yes},
            }
        )
    return rows


def probe_predictions_cases() -> list[Case]:
    """Predictions rows that were scored although they contradict themselves."""
    found: list[Case] = []

    def generative(name: str, edit: Callable[[dict[str, Any]], None], raw: str | None = None) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            rows = _generative_rows(base)
            edit(rows[1])
            lines = [json.dumps(r) for r in rows]
            if raw is not None:
                lines[1] = raw
            path = d / "predictions.jsonl"
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
            return score_args(base, path, d), f"{path}:2"

        found.append(Case(f"predictions-jsonl/{name}", build))

    def flip_answer(r: dict[str, Any]) -> None:
        r["answer"] = "no" if r["answer"] == "yes" else "yes"

    generative("generative-label-contradicts-answer", flip_answer)
    generative("generative-answer-probs-sum-half", lambda r: r.update(answer_probs={"yes": 0.25, "no": 0.25}))
    generative("generative-answer-probs-string", lambda r: r.update(answer_probs={"yes": "high", "no": 0.5}))
    generative("generative-answer-mass-nan", lambda r: r.update(answer_mass=float("nan")))
    generative("generative-answer-mass-inf", lambda r: r.update(answer_mass=float("inf")))
    generative("deep-nesting", lambda r: None, raw=DEEP)
    generative("huge-integer", lambda r: None, raw='{"id": ' + BIG_INT + "}")

    def null_label_beside_probs(d: Path, base: Base) -> tuple[list[str], str]:
        # Once counted as unanswered: a tool that wrote only probs scored as answering nothing.
        rows = [json.loads(line) for line in base.predictions.read_text(encoding="utf-8").splitlines()]
        rows[1]["label"] = None
        path = d / "predictions.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        return score_args(base, path, d), f"{path}:2"

    found.append(Case("predictions-jsonl/classifier-null-label-beside-probs", null_label_beside_probs))
    return found


def probe_tp_cases() -> list[Case]:
    """Sentence pairs and sentence scores (token-probability bias)."""
    found: list[Case] = []

    def pairs(name: str, body: str, suffix: str = ".csv", at: str = "") -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            path = d / f"pairs{suffix}"
            path.write_bytes(body.encode("utf-8") if isinstance(body, str) else body)
            return ["expand", "sentence-pairs", "--source", str(path), "--out", str(d / "o")], f"{path}{at}"

        found.append(Case(f"sentence-pairs/{name}", build))

    pairs("identical-sentences", "more,less,group\nMen cry.,Women cry.,g\nMen cry.,Men cry.,g\n", at=":3")
    pairs(
        "identical-jsonl",
        '{"more": "A b.", "less": "C b."}\n{"more": "A b.", "less": "A b."}\n',
        ".jsonl",
        ":2",
    )
    pairs("jsonl-deep-nesting", '{"more": "A b.", "less": "C b."}\n' + DEEP + "\n", ".jsonl", ":2")

    def latin1(d: Path, base: Base) -> tuple[list[str], str]:
        path = d / "pairs.csv"
        path.write_bytes("more,less\nCaf\xe9 men.,Caf\xe9 women.\n".encode("latin-1"))
        return ["expand", "sentence-pairs", "--source", str(path), "--out", str(d / "o")], f"{path}:2"

    found.append(Case("sentence-pairs/latin1", latin1))

    def scores(name: str, edit: Callable[[dict[str, Any]], None]) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            source = d / "pairs.csv"
            source.write_text(
                "more,less,group\nMen cry.,Women cry.,g\nMen run.,Women run.,g\n", encoding="utf-8"
            )
            from bad_input_corpus import invoke

            invoke(["expand", "sentence-pairs", "--source", str(source), "--out", str(d / "s")])
            rows = [
                {"id": f"sentence-pairs:{i}", "model": "t", "label": None, "kind": "sentence-logprob",
                 "score_more": -10.0, "score_less": -12.0, "tokens_more": 3, "tokens_less": 3}
                for i in (1, 2)
            ]  # fmt: skip
            edit(rows[1])
            path = d / "predictions.jsonl"
            path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
            args = ["score", "--samples", str(d / "s"), "--predictions", str(path), "--out", str(d / "o")]
            return [*args, "--bootstrap", "0"], f"{path}:2"

        found.append(Case(f"tp-scores/{name}", build))

    scores("score-more-positive", lambda r: r.update(score_more=5.0))
    scores("score-more-nan", lambda r: r.update(score_more=float("nan")))
    scores("score-less-string", lambda r: r.update(score_less="-3"))
    return found


def probe_files_cases() -> list[Case]:
    """metrics.json, manifests, judgement imports: JSON that ended in an internal error."""
    found: list[Case] = []

    def run_file(name: str, file: str, body: Callable[[bytes], bytes]) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            run = d / "run"
            shutil.copytree(base.run, run)
            path = run / file
            path.write_bytes(body(path.read_bytes()))
            return ["report", str(run), "--format", "md"], str(path)

        found.append(Case(f"run-files/{name}", build))

    run_file("metrics-deep-nesting", "metrics.json", lambda b: DEEP.encode())
    run_file("metrics-huge-integer", "metrics.json", lambda b: b'{"n": ' + BIG_INT.encode() + b"}")
    run_file("manifest-deep-nesting", "manifest.json", lambda b: DEEP.encode())
    run_file("manifest-huge-integer", "manifest.json", lambda b: b'{"n": ' + BIG_INT.encode() + b"}")

    def manifest_entry(value: Any) -> Callable[[bytes], bytes]:
        def edit(b: bytes) -> bytes:
            manifest = json.loads(b)
            manifest["files"]["metrics.json"] = value
            return json.dumps(manifest).encode()

        return edit

    run_file("manifest-entry-list", "manifest.json", manifest_entry([1, 2]))
    run_file("manifest-entry-null", "manifest.json", manifest_entry(None))

    def judgements(name: str, body: bytes) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            shutil.copytree(base.validation_run, d / "vrun")
            path = d / "j.json"
            path.write_bytes(body)
            return ["validate", "import", str(d / "vrun"), str(path), "--format", "label-studio"], str(path)

        found.append(Case(f"validation/{name}", build))

    judgements("import-json-deep-nesting", DEEP.encode())
    judgements("import-json-huge-integer", b'[{"data": {"hypothesis_id": ' + BIG_INT.encode() + b"}}]")
    return found


def probe_options_cases() -> list[Case]:
    """Options that contradict each other or are out of range (two of them hung)."""
    found: list[Case] = []
    add = adder(found)

    @add("options/no-cache-with-cache")
    def _(d: Path, base: Base) -> tuple[list[str], str]:
        return [*audit_args(base.samples, d), "--cache", str(d / "c.sqlite")], "--no-cache"

    @add("options/label-map-on-fake")
    def _(d: Path, base: Base) -> tuple[list[str], str]:
        return [
            *audit_args(base.samples, d),
            "--label-map",
            "0=entailment,1=neutral,2=contradiction",
        ], "--label-map"

    @add("options/dtype-on-fake")
    def _(d: Path, base: Base) -> tuple[list[str], str]:
        return [*audit_args(base.samples, d), "--dtype", "bfloat16"], "--dtype"

    @add("options/model-empty")
    def _(d: Path, base: Base) -> tuple[list[str], str]:
        args = audit_args(base.samples, d)
        args[args.index("fake:m")] = ""
        return args, "--model"

    @add("options/min-annotators-zero")
    def _(d: Path, base: Base) -> tuple[list[str], str]:
        return ["validate", "status", str(base.validation_run), "--min-annotators", "0"], "--min-annotators"

    @add("options/min-annotators-negative")
    def _(d: Path, base: Base) -> tuple[list[str], str]:
        return ["validate", "status", str(base.validation_run), "--min-annotators", "-1"], "--min-annotators"

    @add("options/prescreen-threshold-2")
    def _(d: Path, base: Base) -> tuple[list[str], str]:
        run = d / "vrun"
        shutil.copytree(base.validation_run, run)
        kept = run / "filter" / "kept.jsonl"
        kept.parent.mkdir()
        kept.write_text('{"subtopic": "s", "hypothesis": "Men are brave."}\n', encoding="utf-8")
        return [
            "validate",
            "prescreen",
            str(run),
            "--judge",
            "fake:j",
            "--threshold",
            "2",
            "--no-progress",
        ], "--threshold"

    @add("options/demo-pairs-zero")
    def _(d: Path, base: Base) -> tuple[list[str], str]:
        return ["demo", "--pairs", "0", "--out", str(d / "demo"), "--quiet"], "--pairs"

    @add("options/serve-break-negative")
    def _(d: Path, base: Base) -> tuple[list[str], str]:
        return ["validate", "serve", str(base.validation_run), "--break-minutes", "-5"], "--break-minutes"

    def extend(name: str, options: list[str], named: str, config: bytes | None = None) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            args = ["extend", "--out", str(d / "next"), "--mlm", "fake", "--until", "masks", *options]
            if config is not None:
                (d / "config.yaml").write_bytes(config)
                args += ["--config", str(d / "config.yaml")]
            return [*args, "--cache", str(d / "c.sqlite"), "--no-progress"], named.replace(
                "CONFIG", str(d / "config.yaml")
            )

        found.append(Case(f"extend-config/{name}", build))

    extend("top-k-zero", ["--top-k", "0"], "--top-k")
    extend("policy-unknown", ["--policy", "most"], "--policy")
    extend("flow-duplicate-key", [], "CONFIG:1", b"mlm: {top_k: 3, top_k: 50}\n")
    extend("run-dir-empty", [], "CONFIG", b"run_dir: ''\n")
    extend("mlm-model-empty", [], "CONFIG", b"mlm:\n  model: ''\n")
    return found


def probe_cache_cases() -> list[Case]:
    """Cache rows that were used although they belong to another key or carry no checksum of
    their key: recomputed, with a warning (the audit still succeeds, on the right values)."""
    found: list[Case] = []

    def cache(name: str, edit: Callable[[Any], None]) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            import sqlite3

            path = d / "cache.sqlite"
            shutil.copy(base.cache, path)
            with sqlite3.connect(path) as db:
                edit(db)
            args = ["audit", "--samples", str(base.samples), "--model", "fake:m", "--out", str(d / "o")]
            return [*args, "--bootstrap", "0", "--cache", str(path), "--quiet"], "recomputed"

        found.append(Case(f"cache/{name}", build, expect="warn"))

    def swap(db: Any) -> None:
        (key_a, value_a), (key_b, value_b) = db.execute("SELECT key, value FROM outputs LIMIT 2")
        db.execute("UPDATE outputs SET value = ? WHERE key = ?", (value_b, key_a))
        db.execute("UPDATE outputs SET value = ? WHERE key = ?", (value_a, key_b))

    def legacy(db: Any) -> None:  # the value alone, as nlibias wrote it before checksums
        db.execute("UPDATE outputs SET value = substr(value, 1, instr(value, '#') - 1)")

    cache("values-swapped-between-keys", swap)
    cache("rows-without-checksum", legacy)
    return found


def probe_nesting_cases() -> list[Case]:
    """Sources, prompt files and configurations nested deep enough to exhaust Python's recursion."""
    found: list[Case] = []

    def case(name: str, build_args: Callable[[Path, Base], tuple[list[str], Path]]) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            args, path = build_args(d, base)
            return args, str(path)

        found.append(Case(name, build))

    def bbnli(d: Path, base: Base) -> tuple[list[str], Path]:
        path = d / "src" / "gender" / "deep.json"
        path.parent.mkdir(parents=True)
        path.write_text(DEEP, encoding="utf-8")
        return ["expand", "bbnli", "--source", str(d / "src"), "--out", str(d / "o")], path

    def prompt(suffix: str, body: str) -> Callable[[Path, Base], tuple[list[str], Path]]:
        def build(d: Path, base: Base) -> tuple[list[str], Path]:
            path = d / f"prompts{suffix}"
            path.write_text(body, encoding="utf-8")
            args = ["audit", "--samples", str(base.samples), "--generative", "fake:g", "--prompt", str(path)]
            return [*args, "--out", str(d / "o"), "--bootstrap", "0", "--no-cache", "--quiet"], path

        return build

    def config(d: Path, base: Base) -> tuple[list[str], Path]:
        path = d / "config.yaml"
        path.write_text("mlm: " + DEEP + "\n", encoding="utf-8")
        args = [
            "extend",
            "--config",
            str(path),
            "--out",
            str(d / "next"),
            "--mlm",
            "fake",
            "--until",
            "masks",
        ]
        return [*args, "--cache", str(d / "c.sqlite"), "--no-progress"], path

    case("bbnli-json/deep-nesting", bbnli)
    case("prompt-file/json-deep-nesting", prompt(".json", DEEP))
    case("prompt-file/yaml-deep-nesting", prompt(".yaml", "prompts: " + DEEP + "\n"))
    case("extend-config/yaml-deep-nesting", config)
    return found
