"""Session 29, finder s29d: benchmark-specific inputs and plug-ins, the routes earlier rounds reached
least: BBQ (its source files, its options, multiple-choice prompt styles and prompt files, answer
files of other tools), token-probability scoring (CrowS-Pairs, WinoQueer, sentence pairs: score
files, ``--mlm``/``--causal`` roles, variants), the gender-occupation set and debias (word lists,
name lists, seeds, option combinations), lm-eval logs given to ``score``, and third-party plug-in
benchmarks (measure declarations, expansions, measures out of range, names and sources). The
command line, Python and YAML (prompt files). Part of the corpus of ``bad_input_cases``; none
repeats an earlier case."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import nlibias
from bad_input_cases_declared import _model_dir
from bad_input_cases_routes import (
    _TABLES,
    _bbq_rows,
    _bbq_run,
    _install,
    _lean,
    _plugin_registry,
    _write_jsonl,
)
from bad_input_cases_s27 import _augment, _debias
from bad_input_cases_s28 import _lm_eval_row, _write
from bad_input_corpus import Base, Case, audit_args, cases_of, invoke, score_args

KNOWN: dict[str, str] = {}

Add = Callable[..., None]
Build = Callable[[Path, Base], list[str]]
PyBuild = Callable[[Path, Base], Callable[[], object]]
Named = str | Callable[[Path], str]


def _cli(case: Add, group: str) -> Callable[..., None]:
    def add(name: str, args: Build, named: Named, expect: str = "error", **kw: object) -> None:
        def build(d: Path, b: Base) -> tuple[list[str], str]:
            built = args(d, b)
            return built, named(d) if callable(named) else named

        case(f"s29d-{group}/cli-{name}", build, expect, **kw)

    return add


def _py(case: Add, group: str) -> Callable[..., None]:
    def add(name: str, named: Named, call: PyBuild, expect: str = "error", **kw: object) -> None:
        def build(d: Path, b: Base) -> tuple[Callable[[], object], str]:
            made = call(d, b)
            return made, named(d) if callable(named) else named

        case(f"s29d-{group}/python-{name}", build, expect, **kw)

    return add


# -- BBQ ------------------------------------------------------------------------------------------


def _bbq_lines(d: Path, edit: Callable[[list[str]], list[str] | bytes], name: str = "ages.jsonl") -> Path:
    """The 8 first Age examples as a file of the user's own, its lines edited."""
    lines = [json.dumps(row) for row in _bbq_rows()]
    made = edit(lines)
    path = d / "src" / name
    return _write(path, made if isinstance(made, bytes) else "\n".join(made) + "\n")


def _expand_bbq(d: Path) -> list[str]:
    return ["expand", "bbq", "--source", str(d / "src"), "--out", str(d / "out")]


def _second(edit: Callable[[dict[str, Any]], None]) -> Callable[[list[str]], list[str]]:
    def change(lines: list[str]) -> list[str]:
        row = json.loads(lines[1])
        edit(row)
        lines[1] = json.dumps(row)
        return lines

    return change


def _set(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda row: row.__setitem__(key, value)


def _bbq_generative(d: Path, *extra: str) -> list[str]:
    run = _bbq_run(d)
    args = audit_args(run, d / "a")
    at = args.index("--model")
    return [*args[:at], "--generative", "fake:g", *args[at + 2 :], *extra]


def _answers(d: Path, rows: list[dict[str, Any]] | None = None) -> tuple[Path, Path]:
    run = _bbq_run(d)
    made = rows if rows is not None else [{**row, "uqa": row["ans0"]} for row in _bbq_rows()]
    return run, _write_jsonl(d / "answers.jsonl", made)


def _score_answers(run: Path, d: Path, *files: Path, column: str = "uqa") -> list[str]:
    args = ["score", "--samples", str(run)]
    for path in files:
        args += ["--predictions", str(path)]
    return [*args, "--answer-column", column, "--out", str(d / "o"), "--bootstrap", "0"]


def _bbq_source_cases(case: Add) -> None:
    cli = _cli(case, "bbq-source")

    def edited(name: str, edit: Callable[[list[str]], list[str] | bytes], line: str = ":2") -> None:
        cli(
            name,
            lambda d, b: (_bbq_lines(d, edit), _expand_bbq(d))[1],
            lambda d: f"{d / 'src' / 'ages.jsonl'}{line}",
        )

    edited("context-key-twice", lambda ls: [ls[0], ls[1][:-1] + ', "context": "Another context."}', *ls[2:]])
    edited("label-true", _second(_set("label", True)))
    edited("label-a-float", _second(_set("label", 1.0)))
    edited("example-id-a-float", _second(_set("example_id", 1.5)))
    edited("example-id-true", _second(_set("example_id", True)))
    edited("ans1-nan", lambda ls: [ls[0], ls[1].replace('"ans1": ', '"ans1": NaN, "x": ', 1), *ls[2:]])
    edited("question-polarity-missing", _second(lambda row: row.pop("question_polarity")))
    edited("question-polarity-unknown", _second(_set("question_polarity", "positive")))
    edited(
        "stereotyped-groups-a-string",
        _second(lambda row: row["additional_metadata"].update(stereotyped_groups="old")),
    )
    edited("additional-metadata-missing", _second(lambda row: row.pop("additional_metadata")))
    edited("question-blank", _second(_set("question", "  ")))
    edited("context-blank", _second(_set("context", "")))
    edited("question-index-a-list", _second(_set("question_index", ["1"])))
    edited("a-line-a-json-list", lambda ls: [ls[0], "[" + ls[1] + "]", *ls[2:]])
    edited("last-line-cut", lambda ls: [*ls[:-1], ls[-1][: len(ls[-1]) // 2]], ":8")

    def json_array(d: Path, b: Base) -> list[str]:
        _write(d / "src" / "ages.json", json.dumps(_bbq_rows()))
        return _expand_bbq(d)

    cli("source-a-json-array-file", json_array, lambda d: str(d / "src"))

    def no_jsonl(d: Path, b: Base) -> list[str]:
        _write(d / "src" / "notes.txt", "BBQ examples come later.\n")
        return _expand_bbq(d)

    cli("source-a-folder-without-category-files", no_jsonl, lambda d: str(d / "src"))

    def vocabulary(d: Path, b: Base) -> list[str]:
        from bad_input_cases_routes import _data_dir

        path = _data_dir() / "bbq" / "templates" / "vocabulary_proper_names.csv"
        return ["expand", "bbq", "--source", str(path), "--out", str(d / "out")]

    cli("source-the-proper-names-vocabulary", vocabulary, "vocabulary_proper_names.csv")

    def pinned_allowed(d: Path, b: Base) -> list[str]:
        rows = _bbq_rows()
        rows[0]["context"] += " Edited."
        _write_jsonl(d / "src" / "data" / "Age.jsonl", rows)
        return [*_expand_bbq(d), "--allow-modified-data"]

    cli("pinned-name-edited-allowed", pinned_allowed, "Age.jsonl", expect="warn")

    py = _py(case, "bbq-source")
    py("expand-unknown-option-limit", "limit",
       lambda d, b: (lambda: nlibias.expand("bbq", source=_bbq_lines(d, lambda ls: ls), out_dir=d / "o", limit=4)))  # fmt: skip
    py("expand-label-true", lambda d: f"{d / 'src' / 'ages.jsonl'}:2",
       lambda d, b: (lambda: nlibias.expand("bbq", source=_bbq_lines(d, _second(_set("label", True))), out_dir=d / "o")))  # fmt: skip


def _bbq_answer_cases(case: Add) -> None:
    cli = _cli(case, "bbq-answers")

    def answered(name: str, rows: Callable[[list[dict[str, Any]]], list[dict[str, Any]]], named: Named = "",
                 expect: str = "error") -> None:  # fmt: skip
        def args(d: Path, b: Base) -> list[str]:
            run, path = _answers(d, rows([{**row, "uqa": row["ans0"]} for row in _bbq_rows()]))
            return _score_answers(run, d, path)

        cli(name, args, named or (lambda d: str(d / "answers.jsonl")), expect)

    answered("every-answer-unreadable", lambda rs: [{**r, "uqa": "zzz"} for r in rs], "'zzz'")
    answered("answers-nan", lambda rs: [{**r, "uqa": math.nan} for r in rs])
    answered("answer-true", lambda rs: [*rs[:-1], {**rs[-1], "uqa": True}])
    answered("example-id-true", lambda rs: [*rs[:-1], {**rs[-1], "example_id": True}])
    answered(
        "example-id-a-float", lambda rs: [*rs[:-1], {**rs[-1], "example_id": float(rs[-1]["example_id"])}]
    )
    answered("category-lower-case", lambda rs: [*rs[:-1], {**rs[-1], "category": "age"}])
    answered("category-missing", lambda rs: [*rs[:-1], {k: v for k, v in rs[-1].items() if k != "category"}])
    answered("one-example-answered-twice-differently",
             lambda rs: [*rs, {**rs[0], "uqa": rs[0]["ans1"]}])  # fmt: skip

    def same_file_twice(d: Path, b: Base) -> list[str]:
        run, path = _answers(d)
        return _score_answers(run, d, path, path)

    cli("same-file-twice", same_file_twice, lambda d: str(d / "answers.jsonl"))

    def with_predictions(d: Path, b: Base) -> list[str]:
        run, path = _answers(d)
        audit = d / "gen"
        args = audit_args(run, audit)
        at = args.index("--model")
        code, text, _ = invoke([*args[:at], "--generative", "fake:g", *args[at + 2 :]])
        assert code == 0, text
        return _score_answers(run, d, path, audit / "o" / "predictions.jsonl")

    cli(
        "answers-beside-nlibias-predictions",
        with_predictions,
        lambda d: str(d / "gen" / "o" / "predictions.jsonl"),
    )

    def column_in_the_samples(d: Path, b: Base) -> list[str]:
        run, path = _answers(d)
        return _score_answers(run, d, path, column="context")

    cli("column-the-context", column_in_the_samples, "--answer-column")

    py = _py(case, "bbq-answers")
    py("answer-column-a-list", "answer_column",
       lambda d, b: (lambda r, p: lambda: nlibias.score(r, p, answer_column=["uqa"], bootstrap=0))(*_answers(d)))  # fmt: skip
    py("answer-column-a-number", "answer_column",
       lambda d, b: (lambda r, p: lambda: nlibias.score(r, p, answer_column=5, bootstrap=0))(*_answers(d)))  # fmt: skip
    py("every-answer-unreadable", "'zzz'",
       lambda d, b: (lambda r, p: lambda: nlibias.score(r, p, answer_column="uqa", bootstrap=0))(
           *_answers(d, [{**row, "uqa": "zzz"} for row in _bbq_rows()])), expect="error")  # fmt: skip


def _bbq_audit_cases(case: Add) -> None:
    cli = _cli(case, "bbq-audit")
    cli(
        "prompt-race-twice",
        lambda d, b: _bbq_generative(d, "--prompt", "race", "--prompt", "race"),
        "--prompt",
    )
    cli("option-score-with-mode-generated",
        lambda d, b: _bbq_generative(d, "--mode", "generated", "--option-score", "per-byte"), "--option-score")  # fmt: skip
    cli(
        "max-new-tokens-with-mode-scored",
        lambda d, b: _bbq_generative(d, "--max-new-tokens", "5"),
        "--max-new-tokens",
    )
    cli(
        "tp-variant-without-a-sentence-scorer",
        lambda d, b: _bbq_generative(d, "--tp-variant", "whole"),
        "--tp-variant",
    )
    cli("limit-zero", lambda d, b: _bbq_generative(d, "--limit", "0"), "--limit")
    cli("prompt-arc-in-capitals", lambda d, b: _bbq_generative(d, "--prompt", "ARC"), "--prompt")

    def causal_on_bbq(d: Path, b: Base) -> list[str]:
        args = _bbq_generative(d)
        at = args.index("--generative")
        return [*args[:at], "--causal", str(_model_dir(d, "GPT2LMHeadModel")), *args[at + 2 :]]

    cli("causal-on-bbq", causal_on_bbq, "--causal")

    def prompt_file(name: str, text: str, named: Named = "", line: str = "", expect: str = "error") -> None:
        def args(d: Path, b: Base) -> list[str]:
            path = _write(d / "prompts.yaml", text)
            return _bbq_generative(d, "--prompt", str(path))

        case(
            f"s29d-bbq-audit/yaml-prompt-{name}",
            lambda d, b: (args(d, b), named or f"{d / 'prompts.yaml'}{line}"),
            expect,
        )

    prompt_file("options-without-premise",
                'prompts:\n  - name: mc\n    template: "{hypothesis} {options}"\n', line=":2")  # fmt: skip
    prompt_file("options-with-yes-no-answers",
                'prompts:\n  - name: mc\n    template: "{premise} {hypothesis} {options}"\n    answers: [yes, no]\n',
                line=":4")  # fmt: skip
    prompt_file("named-race",
                'prompts:\n  - name: race\n    template: "Q: {hypothesis} {options} C: {premise}"\n', line=":2")  # fmt: skip
    prompt_file("second-style-yes-no",
                'prompts:\n  - name: mc\n    template: "{premise} {hypothesis} {options}"\n'
                '  - name: yn\n    template: "{premise} {hypothesis} yes or no?"\n', named="'yn'")  # fmt: skip
    prompt_file("options-misspelt",
                'prompts:\n  - name: mc\n    template: "{premise} {hypothesis} {option}"\n', line=":2")  # fmt: skip

    def mc_on_bbnli(d: Path, b: Base) -> list[str]:
        path = _write(
            d / "prompts.yaml", 'prompts:\n  - name: mc\n    template: "{premise} {hypothesis} {options}"\n'
        )
        args = audit_args(b.samples, d)
        at = args.index("--model")
        return [*args[:at], "--generative", "fake:g", "--prompt", str(path), *args[at + 2 :]]

    case("s29d-bbq-audit/yaml-prompt-options-on-bbnli", lambda d, b: (mc_on_bbnli(d, b), "--prompt"))

    py = _py(case, "bbq-audit")

    def audit_bbq(**options: Any) -> PyBuild:
        return lambda d, b: (lambda run: lambda: nlibias.audit(run, generative=["fake:g"], cache=False, bootstrap=0,
                                                              progress=False, **options))(_bbq_run(d))  # fmt: skip

    py("prompts-true", "prompt style 'true'", audit_bbq(prompts=["true"]))
    py("option-score-bytes", "option_score", audit_bbq(option_score="bytes"))
    py(
        "option-score-with-mode-generated",
        "option_score",
        audit_bbq(mode="generated", option_score="per-byte"),
    )
    py("limit-true", "limit", audit_bbq(limit=True))


# -- token probability ------------------------------------------------------------------------------


def _pairs_run(
    d: Path, text: str = "more,less,group\nMen cry.,Women cry.,g\nMen run.,Women run.,g\n"
) -> Path:
    source = _write(d / "pairs.csv", text)
    code, out, _ = invoke(["expand", "sentence-pairs", "--source", str(source), "--out", str(d / "s")])
    assert code == 0, out
    return d / "s"


def _tp_row(i: int, **changes: Any) -> dict[str, Any]:
    row = {"id": f"sentence-pairs:{i}", "model": "t", "label": None, "kind": "sentence-logprob",
           "score_more": -10.0, "score_less": -12.0, "tokens_more": 3, "tokens_less": 3}  # fmt: skip
    row.update(changes)
    return row


def _tp_score(d: Path, second: dict[str, Any], first: dict[str, Any] | None = None) -> list[str]:
    run = _pairs_run(d)
    path = _write_jsonl(d / "predictions.jsonl", [first or _tp_row(1), second])
    return [
        "score",
        "--samples",
        str(run),
        "--predictions",
        str(path),
        "--out",
        str(d / "o"),
        "--bootstrap",
        "0",
    ]


def _folder(d: Path, architecture: str) -> str:
    """A model folder of ``architecture`` (made once per case)."""
    return str(d / architecture) if (d / architecture).exists() else str(_model_dir(d, architecture))


def _crows(d: Path) -> Path:
    from bad_input_cases_s28 import _crows_rows

    return _write(d / "crows.csv", _crows_rows())


def _tp_cases(case: Add) -> None:
    cli = _cli(case, "tp")

    def scored(name: str, **changes: Any) -> None:
        cli(
            f"score-{name}",
            lambda d, b: _tp_score(d, _tp_row(2, **changes)),
            lambda d: f"{d / 'predictions.jsonl'}:2",
        )

    scored("tokens-more-zero", tokens_more=0)
    scored("tokens-less-a-float", tokens_less=2.5)
    scored("tokens-more-negative", tokens_more=-3)
    scored("score-less-minus-inf", score_less=-math.inf)
    scored("no-pair-with-scores", no_pair=True)
    scored("kind-classifier", kind="classifier", label="entailment", probs=[0.8, 0.1, 0.1])
    scored("score-more-true", score_more=True)
    for label, model in (("another-models-rows-only", "u"), ("variant-of-another-model", "t|tp=whole")):
        cli(
            f"score-{label}",
            (lambda m: lambda d, b: _tp_score(d, _tp_row(2, model=m)))(model),
            "sentence-pairs:2",
        )
    cli("score-one-pair-twice",
        lambda d, b: _tp_score(d, _tp_row(1, score_more=-20.0)), lambda d: f"{d / 'predictions.jsonl'}:2")  # fmt: skip

    def pairs(name: str, text: str, line: str) -> None:
        def args(d: Path, b: Base) -> list[str]:
            return [
                "expand",
                "sentence-pairs",
                "--source",
                str(_write(d / "pairs.csv", text)),
                "--out",
                str(d / "s"),
            ]

        cli(f"expand-sentence-pairs-{name}", args, lambda d: f"{d / 'pairs.csv'}{line}")

    pairs("same-pair-twice", "more,less\nMen cry.,Women cry.\nMen cry.,Women cry.\n", ":3")
    pairs("sentences-differ-by-a-trailing-space", "more,less\nMen cry.,Men cry. \n", ":2")
    pairs("group-column-twice", "more,less,group,group\nMen cry.,Women cry.,g,h\n", ":1")

    def crows_edit(name: str, edit: Callable[[list[str]], list[str]], line: str) -> None:
        def args(d: Path, b: Base) -> list[str]:
            path = _crows(d)
            lines = path.read_text(encoding="utf-8").splitlines()
            path.write_text("\n".join(edit(lines)) + "\n", encoding="utf-8")
            return ["expand", "crows-pairs", "--source", str(path), "--out", str(d / "s")]

        cli(f"expand-crows-pairs-{name}", args, lambda d: f"{d / 'crows.csv'}{line}")

    def same_sentences(lines: list[str]) -> list[str]:
        import csv
        import io

        rows = list(csv.reader(io.StringIO("\n".join(lines))))
        at = rows[0].index("sent_less")
        rows[-1][at] = rows[-1][rows[0].index("sent_more")]
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator="\n").writerows(rows)
        return buffer.getvalue().splitlines()

    crows_edit("last-row-sentences-the-same", same_sentences, ":7")
    crows_edit("last-row-repeats-the-first", lambda ls: [*ls, ls[1]], "")

    def crows_audit(d: Path, *extra: str) -> list[str]:
        path = _crows(d)
        code, out, _ = invoke(["expand", "crows-pairs", "--source", str(path), "--out", str(d / "s")])
        assert code == 0, out
        args = audit_args(d / "s", d)
        at = args.index("--model")
        return [*args[:at], *extra, *args[at + 2 :]]

    masked = lambda d: _folder(d, "BertForMaskedLM")  # noqa: E731
    causal = lambda d: _folder(d, "GPT2LMHeadModel")  # noqa: E731
    cli("audit-causal-a-masked-lm", lambda d, b: crows_audit(d, "--causal", masked(d)), "--causal")
    cli("audit-mlm-a-causal-lm", lambda d, b: crows_audit(d, "--mlm", causal(d)), "--mlm")
    cli("audit-prompt-with-only-an-mlm",
        lambda d, b: crows_audit(d, "--mlm", masked(d), "--prompt", "true"), "--prompt")  # fmt: skip
    cli("audit-mode-generated-with-only-an-mlm",
        lambda d, b: crows_audit(d, "--mlm", masked(d), "--mode", "generated"), "--mode")  # fmt: skip
    cli("audit-option-score-with-only-an-mlm",
        lambda d, b: crows_audit(d, "--mlm", masked(d), "--option-score", "per-byte"), "--option-score")  # fmt: skip
    cli("audit-label-map-with-only-an-mlm",
        lambda d, b: crows_audit(d, "--mlm", masked(d), "--label-map", "0=entailment,1=neutral,2=contradiction"),
        "--label-map")  # fmt: skip

    py = _py(case, "tp")

    def audit_pairs(**options: Any) -> PyBuild:
        return lambda d, b: (lambda run: lambda: nlibias.audit(run, cache=False, bootstrap=0, progress=False,
                                                              **options))(_pairs_run(d))  # fmt: skip

    py("mlm-a-causal-lm", "mlm", lambda d, b: audit_pairs(mlm=[causal(d)])(d, b))
    py("causal-a-masked-lm", "causal", lambda d, b: audit_pairs(causal=[masked(d)])(d, b))
    # the same name twice, or no variant, refused as the arguments are read (before: at model loading)
    py("tp-variants-twice", "tp_variants",
       lambda d, b: audit_pairs(mlm=[masked(d)], tp_variants=["shared", "shared"])(d, b))  # fmt: skip
    py("tp-variants-empty", "tp_variants", lambda d, b: audit_pairs(mlm=[masked(d)], tp_variants=[])(d, b))
    py("mlm-twice", "mlm", lambda d, b: audit_pairs(mlm=[masked(d), masked(d)])(d, b))
    cli("audit-one-mlm-twice", lambda d, b: crows_audit(d, "--mlm", masked(d), "--mlm", masked(d)), "--mlm")
    cli("audit-one-tp-variant-twice",
        lambda d, b: crows_audit(d, "--mlm", masked(d), "--tp-variant", "whole", "--tp-variant", "whole"),
        "--tp-variant")  # fmt: skip


# -- occupations, augment and debias ------------------------------------------------------------------


def _words(d: Path, text: str, name: str = "words.tsv") -> Path:
    return _write(d / name, text)


def _debias_cases(case: Add) -> None:
    cli = _cli(case, "debias")

    def word_list(name: str, text: str, line: str, *, command: str = "augment") -> None:
        def args(d: Path, b: Base) -> list[str]:
            path = str(_words(d, text))
            return (
                _augment(d, "--word-list", path) if command == "augment" else _debias(d, "--word-list", path)
            )

        cli(f"{command}-word-list-{name}", args, lambda d: f"{d / 'words.tsv'}{line}")

    word_list("three-fields", "he\tshe\this\n", ":1")
    word_list("a-blank-partner", "king\tqueen\nprince\t\n", ":2")
    word_list("spaces-not-a-tab", "king queen\n", ":1")
    word_list("three-fields", "he\tshe\this\n", ":1", command="debias")

    def names(name: str, text: str, line: str) -> None:
        def args(d: Path, b: Base) -> list[str]:
            return _augment(d, "--names", str(_words(d, text, "names.tsv")), "--select", "all")

        cli(f"augment-names-{name}", args, lambda d: f"{d / 'names.tsv'}{line}")

    names("one-column", "John\tMary\nWill\n", ":2")

    cli(
        "augment-match-with-select-all",
        lambda d, b: _augment(d, "--select", "all", "--match", "paper"),
        "--match",
    )
    cli(
        "debias-match-with-select-all",
        lambda d, b: _debias(d, "--select", "all", "--match", "paper"),
        "--match",
    )
    cli("debias-seed-negative", lambda d, b: _debias(d, "--seed", "-1"), "--seed")
    cli("debias-seed-beyond-32-bits", lambda d, b: _debias(d, "--seed", str(2**32)), "--seed")
    cli(
        "debias-max-steps-with-epochs",
        lambda d, b: _debias(d, "--max-steps", "5", "--epochs", "2"),
        "--epochs",
    )

    def expand_occ(*extra: str) -> Build:
        def args(d: Path, b: Base) -> list[str]:
            premises = _write(
                d / "premises.txt", "The nurse is walking.\nThe engineer is here.\nThe teacher sat.\n"
            )
            return ["expand", "occupations", "--source", str(premises), "--out", str(d / "o"), *extra]

        return args

    cli("expand-occupations-seed-negative", expand_occ("--seed", "-1"), "--seed")
    cli("expand-occupations-seed-beyond-64-bits", expand_occ("--seed", str(2**64)), "--seed")
    cli("expand-occupations-hypothesis-templates-both", expand_occ("--hypothesis-templates", "both"),
        "--hypothesis-templates")  # fmt: skip
    cli("expand-occupations-premise-twice-with-case",
        lambda d, b: [*expand_occ()(d, b)[:3], str(_write(d / "p.txt", "The nurse is walking.\nthe nurse is walking.\n")),
                      "--out", str(d / "o")], lambda d: f"{d / 'p.txt'}:2", expect="warn")  # fmt: skip

    py = _py(case, "debias")
    py("expand-occupations-seed-negative", "seed",
       lambda d, b: lambda: nlibias.expand("occupations", source=_write(d / "p.txt", "The nurse is walking.\n"),
                                           out_dir=d / "o", seed=-1))  # fmt: skip
    py("expand-occupations-hypothesis-templates-all-capitals", "hypothesis_templates",
       lambda d, b: lambda: nlibias.expand("occupations", source=_write(d / "p.txt", "The nurse is walking.\n"),
                                           out_dir=d / "o", hypothesis_templates="ALL"))  # fmt: skip


# -- lm-eval logs given to score --------------------------------------------------------------------


def _lm_log(d: Path, b: Base, edit: Callable[[list[dict[str, Any]]], list[dict[str, Any]] | bytes]) -> Path:
    ids = [json.loads(line)["id"] for line in (b.samples / "samples.jsonl").read_text().splitlines()]
    rows = [_lm_eval_row(i, sample_id, -1.0, -2.0) for i, sample_id in enumerate(ids)]
    made = edit(rows)
    path = d / "lm" / "samples_nlibias_bbnli_true_2026-01-01T00-00-00.000000.jsonl"
    return _write(path, made if isinstance(made, bytes) else "".join(json.dumps(r) + "\n" for r in made))


def _lm_eval_cases(case: Add) -> None:
    cli = _cli(case, "lm-eval")

    def logged(
        name: str, edit: Callable[[list[dict[str, Any]]], Any], line: str, expect: str = "error"
    ) -> None:
        cli(name, lambda d, b: score_args(b, _lm_log(d, b, edit), d),
            lambda d: f"{d / 'lm' / 'samples_nlibias_bbnli_true_2026-01-01T00-00-00.000000.jsonl'}{line}", expect)  # fmt: skip

    def last(**changes: Any) -> Callable[[list[dict[str, Any]]], list[dict[str, Any]]]:
        return lambda rows: [*rows[:-1], {**rows[-1], **changes}]

    logged("doc-id-twice", lambda rows: [*rows, {**rows[0], "resps": [[[-3.0, False]], [[-0.5, False]]],
                                                "filtered_resps": [[-3.0, False], [-0.5, False]]}], "")  # fmt: skip
    logged("last-loglikelihood-nan", last(filtered_resps=[[math.nan, False], [-2.0, False]]), "")
    logged("last-loglikelihood-true", last(filtered_resps=[[True, False], [-2.0, False]]), "")
    logged("last-doc-a-string", last(doc="the doc"), "")
    logged("a-bom", lambda rows: b"\xef\xbb\xbf" + "".join(json.dumps(r) + "\n" for r in rows).encode(), "")
    logged("last-choice-answers-three", last(doc={**_lm_eval_row(0, "x", 0, 0)["doc"], "choice_answers": ["yes", "no", "maybe"]}), "")  # fmt: skip

    def twice(d: Path, b: Base) -> list[str]:
        path = _lm_log(d, b, lambda rows: rows)
        args = score_args(b, path, d)
        return [*args, "--predictions", str(path)]

    cli(
        "same-log-twice",
        twice,
        lambda d: str(d / "lm" / "samples_nlibias_bbnli_true_2026-01-01T00-00-00.000000.jsonl"),
    )

    def glob_nothing(d: Path, b: Base) -> list[str]:
        return score_args(b, d / "lm" / "samples_*.jsonl", d)  # type: ignore[arg-type]

    cli("glob-matching-nothing", glob_nothing, "samples_*.jsonl")

    def with_answer_column(d: Path, b: Base) -> list[str]:
        return [*score_args(b, _lm_log(d, b, lambda rows: rows), d), "--answer-column", "uqa"]

    cli("with-answer-column", with_answer_column, "--answer-column")

    py = _py(case, "lm-eval")
    py("log-twice", "predictions",
       lambda d, b: (lambda p: lambda: nlibias.score(b.samples, [p, p], bootstrap=0))(_lm_log(d, b, lambda r: r)))  # fmt: skip
    py("log-a-bom", lambda d: str(d / "lm"),
       lambda d, b: (lambda p: lambda: nlibias.score(b.samples, p, bootstrap=0))(
           _lm_log(d, b, lambda rows: b"\xef\xbb\xbf" + "".join(json.dumps(r) + "\n" for r in rows).encode())))  # fmt: skip


# -- plug-in benchmarks -------------------------------------------------------------------------------


def _plugin_cases(case: Add) -> None:
    from test_plugin_gate import LEAN, LEAN_BENCHMARK, Leaning
    from test_plugins_isolated import Entry, Expanded, Importing, sample

    def installed(benchmark: Any) -> None:
        from nlibias.catalog import registry

        _install({table: getattr(registry, table).copy() for table in _TABLES}, benchmark)

    def audit_py(name: str, plugin: Callable[[], Any], named: str = "lean", expect: str = "error") -> None:
        def build(d: Path, b: Base) -> tuple[Callable[[], object], str]:
            installed(plugin())
            samples = nlibias.expand("lean", out_dir=d / "samples")
            return lambda: nlibias.audit(samples, models=[Leaning(0.8, 0.4)], cache=False, bootstrap=0,
                                         progress=False), named  # fmt: skip

        case(f"s29d-plugins/python-audit-{name}", build, expect, context=_plugin_registry)

    def audit_cli(name: str, plugin: Callable[[], Any], named: str = "lean", expect: str = "error") -> None:
        def build(d: Path, b: Base) -> tuple[list[str], str]:
            installed(plugin())
            nlibias.expand("lean", out_dir=d / "samples")
            return audit_args(d / "samples", d), named

        case(f"s29d-plugins/cli-audit-{name}", build, expect, context=_plugin_registry)

    def headline(value: Any) -> Callable[[], Any]:
        return lambda: _lean(
            score=lambda columns, *a, **k: {"overall": {"n": len(columns), "lean_gap": value}}
        )

    audit_cli("headline-inf", headline(math.inf))
    audit_cli("headline-nan", headline(math.nan))
    audit_cli("headline-beyond-its-range", headline(-101.0))
    audit_py("headline-true", headline(True))
    audit_py("headline-minus-inf", headline(-math.inf))
    audit_cli("n-negative", lambda: _lean(score=lambda c, *a, **k: {"overall": {"n": -1, "lean_gap": 1.0}}))
    audit_cli("n-zero", lambda: _lean(score=lambda c, *a, **k: {"overall": {"n": 0, "lean_gap": 1.0}}))
    audit_cli("slice-value-nan", lambda: _lean(score=lambda c, *a, **k: {
        "overall": {"n": len(c), "lean_gap": 1.0}, "domain": {"d0": {"n": 3, "lean_gap": math.nan}}}))  # fmt: skip
    audit_cli("undeclared-measure", lambda: _lean(score=lambda c, *a, **k: {
        "overall": {"n": len(c), "lean_gap": 1.0, "lean_gpa": 2.0}}), "lean_gpa")  # fmt: skip

    def other_range() -> Any:
        twin = replace(LEAN, range=(0.0, 1.0), neutral=0.5)
        measures = LEAN_BENCHMARK.measures["classifier"]
        return replace(LEAN_BENCHMARK, measures={"classifier": measures,
                                                  "generative": replace(measures, infos=(twin,))})  # fmt: skip

    def two_ranges(d: Path, b: Base) -> tuple[list[str], str]:
        from nlibias.catalog import registry

        saved = {table: getattr(registry, table).copy() for table in _TABLES}
        _install(saved, LEAN_BENCHMARK)  # its samples, expanded before the plug-in changed
        nlibias.expand("lean", out_dir=d / "samples")
        _install(saved, Importing(other_range))  # the Benchmark is refused where its module builds it
        return audit_args(d / "samples", d), "lean_gap"

    case("s29d-plugins/cli-audit-one-measure-two-ranges", two_ranges, context=_plugin_registry)

    def declared(name: str, info: Callable[[], Any], named: str) -> None:
        def build(d: Path, b: Base) -> tuple[Callable[[], object], str]:
            def register() -> None:
                made = info()
                plugin = replace(LEAN_BENCHMARK, name="lean2", sources=("lean2",),
                                 measures={"classifier": replace(LEAN_BENCHMARK.measures["classifier"], infos=(made,))})  # fmt: skip
                nlibias.register_benchmark(plugin)

            return register, named

        case(f"s29d-plugins/python-register-{name}", build, context=_plugin_registry)

    def info(**changes: Any) -> Callable[[], Any]:
        return lambda: nlibias.MeasureInfo(**{**dict(name="lean2_gap", description="d", direction="zero",
                                                     range=(-100.0, 100.0), citation="c", headline=True,
                                                     neutral=0.0, signed=True), **changes})  # fmt: skip

    declared(
        "range-reversed", info(range=(100.0, -100.0), headline=False, neutral=None, signed=False), "range"
    )
    declared(
        "range-nan", info(range=(math.nan, math.nan), headline=False, neutral=None, signed=False), "range"
    )
    declared("direction-misspelt", info(direction="lowr"), "direction")
    declared("neutral-outside-range", info(neutral=200.0), "neutral")
    declared("name-blank", info(name=" "), "name")
    declared("headline-range-infinite", info(range=(-math.inf, math.inf)), "range")

    def two_infos_one_name() -> Any:
        made = info()()
        return replace(LEAN_BENCHMARK, name="lean2", sources=("lean2",),
                       measures={"classifier": replace(LEAN_BENCHMARK.measures["classifier"], infos=(made, replace(made, range=(0.0, 1.0), neutral=0.5)))})  # fmt: skip

    case("s29d-plugins/python-register-one-measure-declared-twice",
         lambda d, b: (lambda: nlibias.register_benchmark(two_infos_one_name()), "lean2_gap"),
         context=_plugin_registry)  # fmt: skip

    def kind_misspelt() -> None:
        nlibias.register_benchmark(replace(LEAN_BENCHMARK, name="lean2", sources=("lean2",),
                                           measures={"classifer": LEAN_BENCHMARK.measures["classifier"]}))  # fmt: skip

    case(
        "s29d-plugins/python-register-kind-misspelt",
        lambda d, b: (kind_misspelt, "classifer"),
        context=_plugin_registry,
    )

    def expanded(
        name: str, samples: Callable[[], list[Any]], named: str = "lean", route: str = "cli"
    ) -> None:
        def build(d: Path, b: Base) -> tuple[Any, str]:
            installed(replace(LEAN_BENCHMARK, expand=lambda source=None: Expanded(samples())))
            if route == "cli":
                return ["expand", "lean", "--out", str(d / "samples")], named
            return lambda: nlibias.expand("lean", out_dir=d / "samples"), named

        case(f"s29d-plugins/{route}-expand-{name}", build, context=_plugin_registry)

    def pairs(*changes: dict[str, Any]) -> Callable[[], list[Any]]:
        def made() -> list[Any]:
            found = [sample("lean", i, role) for i in range(3) for role in ("pro", "anti")]
            for at, change in zip(range(len(found) - 1, -1, -1), changes, strict=False):
                found[at] = replace(found[at], **change)
            return found

        return made

    expanded("last-sample-of-source-bbnli", pairs({"source": "bbnli"}))
    expanded("last-sample-of-another-plug-in-source", pairs({"source": "lean3"}))
    expanded("last-sample-without-its-twin", lambda: pairs()()[:-1])
    expanded("last-pair-two-pro", pairs({"stereotype": "pro", "id": "lean:2:pro2"}))
    expanded("last-sample-stereotype-unknown", pairs({"stereotype": "neither"}), route="python")
    expanded("last-sample-gold-unknown", pairs({"gold": "maybe"}), route="python")
    expanded("last-sample-premise-blank", pairs({"premise": " "}))
    expanded("samples-a-generator", lambda: (s for s in pairs()()), route="python")  # type: ignore[arg-type,return-value]
    expanded("samples-dicts", lambda: [{"id": "lean:0:pro"}])

    def summary(value: Any) -> Callable[[], Any]:
        class Odd(Expanded):
            def summary(self) -> Any:
                return value

        return lambda: replace(LEAN_BENCHMARK, expand=lambda source=None: Odd(pairs()()))

    for label, value in (("a-list", [1, 2]), ("nan-count", {"samples": math.nan})):
        case(f"s29d-plugins/cli-expand-summary-{label}",
             (lambda v: lambda d, b: (installed(summary(v)()), (["expand", "lean", "--out", str(d / "samples")], "lean"))[1])(value),
             context=_plugin_registry)  # fmt: skip

    def two_dists(d: Path, b: Base) -> tuple[list[str], str]:
        import importlib.metadata

        from nlibias.catalog import registry

        _install({table: getattr(registry, table).copy() for table in _TABLES}, None)
        entries = [Entry("lean", LEAN_BENCHMARK, "nlibias-lean"), Entry("lean", LEAN_BENCHMARK, "lean-fork")]
        importlib.metadata.entry_points = lambda group=None: list(entries)  # type: ignore[assignment]
        return ["expand", "lean", "--out", str(d / "samples")], "lean-fork"

    case("s29d-plugins/cli-expand-one-name-two-distributions", two_dists, context=_plugin_registry)

    def entry_names_other(d: Path, b: Base) -> tuple[list[str], str]:
        import importlib.metadata

        from nlibias.catalog import registry

        _install({table: getattr(registry, table).copy() for table in _TABLES}, None)
        entries = [Entry("lean", replace(LEAN_BENCHMARK, name="lean", sources=("lean",)), "nlibias-lean"),
                   Entry("leaner", replace(LEAN_BENCHMARK, name="leaner", sources=("lean",)), "nlibias-leaner")]  # fmt: skip
        importlib.metadata.entry_points = lambda group=None: list(entries)  # type: ignore[assignment]
        return ["benchmarks"], "leaner"

    case(
        "s29d-plugins/cli-benchmarks-two-plug-ins-one-source",
        entry_names_other,
        "warn",
        context=_plugin_registry,
    )

    def entry_name_differs(d: Path, b: Base) -> tuple[list[str], str]:
        import importlib.metadata

        from nlibias.catalog import registry

        _install({table: getattr(registry, table).copy() for table in _TABLES}, None)
        entries = [Entry("lean", replace(LEAN_BENCHMARK, name="bbq", sources=("lean",)), "nlibias-lean")]
        importlib.metadata.entry_points = lambda group=None: list(entries)  # type: ignore[assignment]
        return ["expand", "lean", "--out", str(d / "samples")], "bbq"

    case("s29d-plugins/cli-expand-entry-point-names-a-built-in", entry_name_differs, context=_plugin_registry)

    def units(rows: Callable[[Any, Any, str], Any]) -> Callable[[], Any]:
        return lambda: _lean(units=rows)

    def gate_units(name: str, plugin: Callable[[], Any], named: str = "lean") -> None:
        def build(d: Path, b: Base) -> tuple[list[str], str]:
            installed(plugin())
            nlibias.expand("lean", out_dir=d / "samples")
            for run in ("c", "r"):
                code, text, _ = invoke(audit_args(d / "samples", d / run))
                assert code == 0, text
            return ["gate", str(d / "c" / "o"), "--baseline", str(d / "r" / "o")], named

        case(f"s29d-plugins/cli-gate-{name}", build, context=_plugin_registry)

    def nan_units(columns: Any, outputs: Any, model: str) -> Any:
        from test_plugin_gate import lean_units

        made = lean_units(columns, outputs, model)
        return nlibias.RunUnits(
            made.blocks, lambda totals: {"lean_gap": totals[:, 0] * math.nan}, made.stratum, made.groups
        )

    def short_units(columns: Any, outputs: Any, model: str) -> Any:
        from test_plugin_gate import lean_units

        made = lean_units(columns, outputs, model)
        return nlibias.RunUnits(
            tuple(block[:-1] for block in made.blocks), made.statistic, made.stratum, made.groups
        )

    gate_units("units-give-nan", units(nan_units))
    gate_units("units-one-row-short", units(short_units))


def s29d_cases() -> list[Case]:
    groups = (_bbq_source_cases, _bbq_answer_cases, _bbq_audit_cases, _tp_cases, _debias_cases, _lm_eval_cases,
              _plugin_cases)  # fmt: skip
    return cases_of(groups, KNOWN)
