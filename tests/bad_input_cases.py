"""The malformed inputs of the bad-input corpus, reader by reader (the rules that judge them are
in ``bad_input_corpus``)."""

from __future__ import annotations

import csv
import io
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bad_input_cases_data import data_cases
from bad_input_cases_declared import declared_cases
from bad_input_cases_explain import explain_cases
from bad_input_cases_fill import fill_and_messages_cases
from bad_input_cases_io import io_cases
from bad_input_cases_leftovers import leftovers_cases
from bad_input_cases_prediction_rows import cases as prediction_rows_cases
from bad_input_cases_probe import (
    probe_cache_cases,
    probe_files_cases,
    probe_nesting_cases,
    probe_options_cases,
    probe_predictions_cases,
    probe_samples_cases,
    probe_tp_cases,
)
from bad_input_cases_routes import routes_cases
from bad_input_cases_rows import cases as rows_cases
from bad_input_cases_s26 import s26_cases
from bad_input_cases_s27 import s27_cases
from bad_input_cases_s27b import s27b_cases
from bad_input_cases_s27c import s27c_cases
from bad_input_cases_s28 import s28_cases
from bad_input_cases_s28b import s28b_cases
from bad_input_cases_s28c import s28c_cases
from bad_input_cases_s28d import s28d_cases
from bad_input_cases_s29a import s29a_cases
from bad_input_cases_s29b import s29b_cases
from bad_input_cases_s29c import s29c_cases
from bad_input_cases_s29d import s29d_cases
from bad_input_cases_s29e import s29e_cases
from bad_input_cases_s29f import s29f_cases
from bad_input_cases_state import cache_cases, options_cases, validation_cases
from bad_input_cases_text import text_cases
from bad_input_cases_validate_explanations import validate_explanations_cases
from bad_input_corpus import (
    BBNLI_CSV_HEADER,
    HUGE,
    LATIN1,
    WQ_HEADER,
    WQ_ROW,
    Base,
    Case,
    audit_args,
    bbnli_csv_rows,
    copy_samples,
    edit_first,
    expand_args,
    score_args,
    text_faults,
)

# -- how a case reads its file --------------------------------------------------------------------


def _bbnli_json_cases() -> list[Case]:
    """BBNLI JSON directory."""
    found: list[Case] = []

    def bbnli_json(
        name: str, mutate: Callable[[str], bytes], expect: str = "error", folder: str = "gender"
    ) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            original = next(base.bbnli_dir.rglob("*.json"))
            target = d / "src" / folder / original.name
            target.parent.mkdir(parents=True)
            target.write_bytes(mutate(original.read_text(encoding="utf-8")))
            return expand_args("bbnli")(d / "src", d), str(target)

        found.append(Case(f"bbnli-json/{name}", build, expect))

    def json_edit(edit: Callable[[dict[str, Any]], None]) -> Callable[[str], bytes]:
        def mutate(text: str) -> bytes:
            raw = json.loads(text)
            edit(raw)
            return json.dumps(raw, ensure_ascii=False).encode()

        return mutate

    bbnli_json("not-utf8", lambda t: t.encode()[:200] + LATIN1 + t.encode()[200:])
    bbnli_json("utf16", lambda t: t.encode("utf-16"))
    bbnli_json("truncated", lambda t: t.encode()[: len(t) // 2])
    bbnli_json("empty", lambda t: b"")
    bbnli_json("binary", lambda t: bytes(range(256)) * 4)
    bbnli_json("top-level-list", lambda t: b"[1, 2]")
    bbnli_json("premise-not-list", json_edit(lambda r: r.update(premise="one premise")))
    bbnli_json("premise-numbers", json_edit(lambda r: r.update(premise=[1, 2])))
    bbnli_json("label-negative", json_edit(lambda r: r["test_hypothesis"][0].__setitem__(1, -1)))
    bbnli_json("label-bool", json_edit(lambda r: r["test_hypothesis"][0].__setitem__(1, True)))
    bbnli_json(
        "bias-gold-entailment", json_edit(lambda r: r["bias_hypothesis_stereotypical"][0].__setitem__(1, 2))
    )
    bbnli_json("missing-key", json_edit(lambda r: r.pop("data")))
    bbnli_json("unknown-placeholder", json_edit(lambda r: r["premise"].__setitem__(0, "{{NOPE}} works.")))
    bbnli_json("lone-surrogate", lambda t: t.replace('"premise": [', '"premise": ["\\ud800 x", ', 1).encode())
    bbnli_json("domain-folder-mismatch", lambda t: t.encode(), expect="warn", folder="race")
    return found


def _bbnli_csv_cases() -> list[Case]:
    """BBNLI expanded CSV."""
    found: list[Case] = []

    def bbnli_csv(name: str, body: Callable[[], bytes]) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            path = d / "bbnli.csv"
            path.write_bytes(body())
            return expand_args("bbnli")(path, d), str(path)

        found.append(Case(f"bbnli-csv/{name}", build))

    def csv_text(rows: list[list[str]], header: list[str] = BBNLI_CSV_HEADER) -> str:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
        return buffer.getvalue()

    valid_csv = csv_text(bbnli_csv_rows())
    for fault, content in text_faults(valid_csv.encode()):
        bbnli_csv(fault, lambda content=content: content)
    bbnli_csv("short-row", lambda: (valid_csv + "gender,man is to worker,00,pro\n").encode())
    bbnli_csv("long-row", lambda: (valid_csv.rstrip("\n") + ",extra\n").encode())
    bbnli_csv(
        "unterminated-quote",
        lambda: (valid_csv + 'gender,"man is to worker,00,pro,u,p,test,h,q,1,1,r\n').encode(),
    )
    bbnli_csv("huge-field", lambda: csv_text(bbnli_csv_rows(hypothesis="x" * HUGE)).encode())
    bbnli_csv("label-negative", lambda: csv_text(bbnli_csv_rows(label="-1")).encode())
    bbnli_csv("label-text", lambda: csv_text(bbnli_csv_rows(label="two")).encode())
    bbnli_csv("bias-gold-entailment", lambda: csv_text(bbnli_csv_rows(label="2")).encode())
    bbnli_csv("empty-hypothesis", lambda: csv_text(bbnli_csv_rows(hypothesis=" ")).encode())
    bbnli_csv("header-only", lambda: csv_text([]).encode())
    bbnli_csv("wrong-header", lambda: b"a,b,c\n1,2,3\n")
    return found


def _wq_nli_csv_cases() -> list[Case]:
    """WQ-NLI CSV."""
    found: list[Case] = []

    def wq(name: str, body: bytes) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            path = d / "wq.csv"
            path.write_bytes(body)
            return expand_args("wq-nli")(path, d), str(path)

        found.append(Case(f"wq-nli-csv/{name}", build))

    valid_wq = (WQ_HEADER + WQ_ROW).encode()
    for fault, content in text_faults(valid_wq):
        wq(fault, content)
    wq("short-row", valid_wq + b"Some people are LGBTQ+.,Some people are straight.\n")
    wq("long-row", valid_wq + WQ_ROW.rstrip("\n").encode() + b",extra\n")
    wq("unterminated-quote", valid_wq + b'"Some people are LGBTQ+.,Some people are straight.,x\n')
    wq(
        "huge-field",
        (WQ_HEADER + "Some people are LGBTQ+.,Some people are straight.," + "x" * HUGE + "\n").encode(),
    )
    wq("empty-cell", (WQ_HEADER + "Some people are LGBTQ+.,,Some people are abnormal.\n").encode())
    wq("header-only", WQ_HEADER.encode())
    wq("wrong-header", b"a,b,c\n1,2,3\n")
    return found


def _premises_cases() -> list[Case]:
    """Occupation premises."""
    found: list[Case] = []

    def premises(name: str, body: bytes, suffix: str = ".txt") -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            path = d / f"premises{suffix}"
            path.write_bytes(body)
            return expand_args("occupations", "--premises")(path, d), str(path)

        found.append(Case(f"premises/{name}", build))

    valid_premises = b"The nurse is waiting.\nA {occupation} is here.\n"
    for fault, content in text_faults(valid_premises):
        premises(fault, content)
    premises("double-slot", b"A {occupation}{occupation} is here.\n")
    premises("unknown-slot", b"A {job} is here.\n")
    premises("header-only-csv", b"premise\n", ".csv")
    premises("gendered", b"The nurse thanked her colleague.\n")
    return found


def _samples_cases() -> list[Case]:
    """Samples.jsonl (audit)."""
    found: list[Case] = []

    def samples(name: str, lines: Callable[[list[str]], list[str]]) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            path = copy_samples(d, base, lines)
            return audit_args(path, d), str(path)

        found.append(Case(f"samples-jsonl/{name}", build))

    samples("not-utf8", lambda ls: [*ls[:2], LATIN1.decode("latin-1"), *ls[2:]])
    samples(
        "lone-surrogate-escape",
        lambda ls: [ls[0].replace('"hypothesis": "', '"hypothesis": "\\ud800', 1), *ls[1:]],
    )
    samples("truncated-line", lambda ls: [*ls[:-1], ls[-1][: len(ls[-1]) // 2]])
    samples("not-object", lambda ls: ["[1, 2]", *ls[1:]])
    samples("gold-unknown", edit_first(lambda r: r.update(gold="yes")))
    samples("gold-number", edit_first(lambda r: r.update(gold=2)))
    samples("empty-hypothesis", edit_first(lambda r: r.update(hypothesis="")))
    samples("blank-premise", edit_first(lambda r: r.update(premise="   ")))
    samples("bias-gold-entailment", edit_first(lambda r: r.update(gold="entailment")))
    samples("stereotype-unknown", edit_first(lambda r: r.update(stereotype="both")))
    samples("id-missing", edit_first(lambda r: r.pop("id")))
    samples("duplicate-id", lambda ls: [ls[0], ls[0], *ls[1:]])
    samples("only-blank-lines", lambda ls: ["", ""])

    def parquet(name: str, mutate: Callable[[bytes], bytes]) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            path = d / "samples.parquet"
            path.write_bytes(mutate((base.samples / "samples.parquet").read_bytes()))
            return audit_args(path, d), str(path)

        found.append(Case(f"samples-parquet/{name}", build))

    parquet("truncated", lambda b: b[: len(b) // 2])
    parquet("garbage", lambda b: b"PAR1" + bytes(range(256)) * 8 + b"PAR1")
    parquet("empty", lambda b: b"")
    parquet("flipped-footer", lambda b: b[:-12] + bytes(x ^ 0xFF for x in b[-12:-4]) + b[-4:])
    return found


def _predictions_cases() -> list[Case]:
    """Predictions.jsonl (score)."""
    found: list[Case] = []

    def predictions(name: str, lines: Callable[[list[str]], list[str]]) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            path = d / "predictions.jsonl"
            original = base.predictions.read_text(encoding="utf-8").splitlines()
            path.write_text("\n".join(lines(original)) + "\n", encoding="utf-8")
            return score_args(base, path, d), str(path)

        found.append(Case(f"predictions-jsonl/{name}", build))

    def pred_edit(edit: Callable[[dict[str, Any]], None]) -> Callable[[list[str]], list[str]]:
        def change(lines: list[str]) -> list[str]:
            record = json.loads(lines[0])
            edit(record)
            return [json.dumps(record), *lines[1:]]

        return change

    def flip_label(r: dict[str, Any]) -> None:
        probs = r["probs"]
        worst = min(probs, key=probs.__getitem__)
        r["label"] = worst

    predictions("not-utf8", lambda ls: [*ls[:1], LATIN1.decode("latin-1"), *ls[1:]])
    predictions("lone-surrogate", lambda ls: [ls[0].replace('"id": "', '"id": "\\udc00', 1), *ls[1:]])
    predictions("truncated-line", lambda ls: [*ls[:-1], ls[-1][: len(ls[-1]) // 2]])
    predictions("label-unknown", pred_edit(lambda r: r.update(label="maybe")))
    predictions("label-number", pred_edit(lambda r: r.update(label=1)))
    predictions("label-contradicts-probs", pred_edit(flip_label))
    predictions(
        "probs-sum-2",
        pred_edit(lambda r: r.update(probs={"entailment": 1.0, "neutral": 0.9, "contradiction": 0.1})),
    )
    predictions(
        "probs-nan",
        pred_edit(
            lambda r: r.update(probs={"entailment": float("nan"), "neutral": 0.5, "contradiction": 0.5})
        ),
    )
    predictions(
        "probs-negative",
        pred_edit(lambda r: r.update(probs={"entailment": -0.5, "neutral": 1.0, "contradiction": 0.5})),
    )
    predictions("probs-list", pred_edit(lambda r: r.update(probs=[0.2, 0.3, 0.5])))
    predictions("unknown-id", pred_edit(lambda r: r.update(id="no-such-sample")))
    predictions("duplicate-row", lambda ls: [ls[0], *ls])
    predictions("empty", lambda ls: [])
    return found


def _metrics_cases() -> list[Case]:
    """Metrics.json (report)."""
    found: list[Case] = []

    def metrics(name: str, mutate: Callable[[bytes], bytes]) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            run = d / "run"
            shutil.copytree(base.run, run)
            path = run / "metrics.json"
            path.write_bytes(mutate(path.read_bytes()))
            return ["report", str(run), "--format", "md"], str(path)

        found.append(Case(f"metrics-json/{name}", build))

    metrics("not-utf8", lambda b: b[:50] + LATIN1 + b[50:])
    metrics("truncated", lambda b: b[: len(b) // 2])
    metrics("empty", lambda b: b"")
    metrics("list", lambda b: b"[]")
    return found


def _prompt_files_cases() -> list[Case]:
    """Prompt files (audit --generative)."""
    found: list[Case] = []

    def prompt(name: str, body: bytes, suffix: str = ".yaml") -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            path = d / f"prompts{suffix}"
            path.write_bytes(body)
            args = ["audit", "--samples", str(base.samples), "--generative", "fake:g", "--prompt", str(path)]
            return [*args, "--out", str(d / "o"), "--bootstrap", "0", "--no-cache", "--quiet"], str(path)

        found.append(Case(f"prompt-file/{name}", build))

    valid_prompt = (
        b'prompts:\n  - name: short\n    template: "{premise} Is it true that {hypothesis}? yes or no"\n'
    )
    for fault, content in text_faults(valid_prompt):
        prompt(fault, content)
    prompt(
        "duplicate-key", valid_prompt + b'prompts:\n  - name: other\n    template: "{premise} {hypothesis}"\n'
    )
    prompt("invalid-yaml", b"prompts: [\n")
    prompt("not-utf8-txt", b"{premise}\nIs it true that {hypothesis}? " + LATIN1, ".txt")
    return found


def _extend_config_cases() -> list[Case]:
    """Extend configuration."""
    found: list[Case] = []

    def config(name: str, body: bytes) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            path = d / "config.yaml"
            path.write_bytes(body)
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
            return [*args, "--cache", str(d / "c.sqlite"), "--no-progress"], str(path)

        found.append(Case(f"extend-config/{name}", build))

    valid_config = b"mlm:\n  top_k: 5\n"
    for fault, content in text_faults(valid_config):
        if fault != "empty":  # an empty configuration is all defaults
            config(fault, content)
    config("duplicate-key", b"mlm:\n  top_k: 5\n  top_k: 6\n")
    config("bool-for-int", b"mlm:\n  top_k: true\n")
    config("string-for-int", b"mlm:\n  top_k: many\n")
    config("unknown-key", b"mlm:\n  top_kk: 5\n")
    config("invalid-yaml", b"mlm: [\n")
    config("top-level-list", b"- 1\n- 2\n")
    return found


def _masks_file_cases() -> list[Case]:
    """Masked-template files."""
    found: list[Case] = []

    def masks(name: str, body: bytes) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            path = d / "masks.jsonl"
            path.write_bytes(body)
            return ["masks", "validate", str(path)], str(path)

        found.append(Case(f"masks-file/{name}", build))

    masks("not-utf8", b'{"subtopic": ' + LATIN1 + b"}\n")
    masks("truncated", b'{"subtopic": "man_is_to_breadwinner", "masked": "<mask>')
    masks("not-object", b"[1]\n")
    masks("lone-surrogate", b'{"subtopic": "\\ud800"}\n')

    def extend_input(name: str, flag: str, body: bytes, suffix: str) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            path = d / f"input{suffix}"
            if flag == "--source":  # a BBNLI directory holding the bad file
                path = d / "src" / "gender" / "bad.json"
                path.parent.mkdir(parents=True)
            path.write_bytes(body)
            given = path.parent.parent if flag == "--source" else path
            args = ["extend", flag, str(given), "--out", str(d / "next"), "--mlm", "fake", "--until", "masks"]
            return [*args, "--cache", str(d / "c.sqlite"), "--no-progress"], str(path)

        found.append(Case(f"extend-input/{name}", build))

    extend_input("source-not-utf8", "--source", b'{"premise": ["' + LATIN1 + b'"]}', ".json")
    extend_input("source-truncated", "--source", b'{"premise": ["A', ".json")
    extend_input("templates-not-utf8", "--templates", b'{"subtopic": ' + LATIN1 + b"}\n", ".jsonl")
    extend_input("templates-truncated", "--templates", b'{"subtopic": "man_is', ".jsonl")
    return found


def cases() -> list[Case]:
    """Every case of the corpus, reader by reader."""
    return [
        *_bbnli_json_cases(),
        *_bbnli_csv_cases(),
        *_wq_nli_csv_cases(),
        *_premises_cases(),
        *_samples_cases(),
        *_predictions_cases(),
        *_metrics_cases(),
        *_prompt_files_cases(),
        *_extend_config_cases(),
        *_masks_file_cases(),
        *validation_cases(),
        *cache_cases(),
        *options_cases(),
        *probe_samples_cases(),
        *probe_predictions_cases(),
        *probe_tp_cases(),
        *probe_files_cases(),
        *probe_options_cases(),
        *probe_cache_cases(),
        *probe_nesting_cases(),
        *rows_cases(),
        *prediction_rows_cases(),
        *text_cases(),
        *fill_and_messages_cases(),
        *explain_cases(),
        *validate_explanations_cases(),
        *data_cases(),  # issue #48: real data, older holes (tests/bad_input_cases_data.py)
        *declared_cases(),
        *io_cases(),  # the I/O layer's guards (issue #48)
        *routes_cases(),  # the newest routes: BBQ, --option-score, --answer-column, plug-in gates (issue #48)
        *s26_cases(),  # a fresh set of issue #48's classes (its acceptance check)
        *s27_cases(),  # another fresh set of issue #48's classes (session 27)
        *s27b_cases(),  # the second fresh set of session 27
        *s27c_cases(),  # the third fresh set of session 27
        *s28_cases(),  # session 28: the input side (expand, audit, score, demo, doctor, ...)
        *s28b_cases(),  # session 28: the output side (gate, report, explain, export, validate, extend, debias)
        *s28c_cases(),  # session 28's last check: every route, weighted to the day's new rules
        *s28d_cases(),  # session 28's final measurement: the last hour's rules on the routes they miss
        *s29a_cases(),  # session 29, finder s29a: the Python route first (own predictors, objects built by hand)
        *s29c_cases(),  # session 29's finder s29c: every command's least-tried options
        *s29d_cases(),  # session 29, finder s29d: benchmark-specific inputs (BBQ, TP, debias, lm-eval) and plug-ins
        *leftovers_cases(),  # session 29: the leftovers of issue #48 (hand-built settings, resamples, ...)
        *s29b_cases(),  # session 29, route b: files and state across commands, derived files, YAML
        *s29e_cases(),  # session 29, finder s29e: the decision and reading side (gate, report, explain, cards, validate)
        *s29f_cases(),  # session 29's final measurement: every command and route, where the day's rules do not reach
    ]
