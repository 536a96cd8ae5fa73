"""Session 28's last acceptance check (``bad_input_cases_s28c``), part two: the helpers the round
shares and the variants of the day's new rules (a key or column twice, a blank path, an empty
settings file) on the readers, options and routes those rules were not written for."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import nlibias
from bad_input_cases_declared import _model_dir
from bad_input_cases_s26 import _extend_args, _gate, _rules, _run_copy
from bad_input_cases_s27 import _augment, _debias, _finetune, _training, _vrun
from bad_input_cases_s28 import _write as write
from bad_input_corpus import (
    BBNLI_CSV_HEADER,
    QUEUE_HEADER,
    QUEUE_ROWS,
    WQ_ROW,
    Base,
    audit_args,
    bbnli_csv_rows,
    score_args,
)

Add = Callable[..., None]
CLASSIFIER = "RobertaForSequenceClassification"
HID = QUEUE_ROWS[0][0]
TEMPLATE = {
    "subtopic": "man_is_to_breadwinner",
    "template": 0,
    "masked": "{{GROUP1}} are simply the main <mask>.",
    "strategy": "replace_placeholder",
}


def pair(d: Path, base: Base) -> tuple[Path, Path]:
    return _run_copy(d, base, "cand"), _run_copy(d, base, "ref")


def bbnli_data() -> Path:
    """The data dir's BBNLI folder (every subtopic the curated templates name)."""
    from bad_input_cases_routes import _data_dir

    return _data_dir() / "bbnli"


def bbnli_copy(d: Path) -> Path:
    """A copy of the data dir's BBNLI folder (a case may write into it)."""
    return Path(shutil.copytree(bbnli_data(), d / "src"))


def extend_cli(d: Path, base: Base, *extra: str) -> list[str]:
    """``extend --until masks`` from the data dir's BBNLI folder, with ``extra``."""
    args = ["extend", "--source", str(bbnli_data()), "--out", str(d / "next"), "--mlm", "fake"]
    return [*args, "--until", "masks", "--cache", str(d / "c.sqlite"), "--no-progress", *extra]


def extend_yaml(d: Path, base: Base, text: str) -> list[str]:
    """``extend --config`` with ``text`` (its ``BASE`` replaced by the data dir's BBNLI folder)."""
    return _extend_args(d, text.replace("BASE", str(bbnli_data())))


def extend_own_cache(d: Path, text: str) -> list[str]:
    """``extend --config`` with ``text`` and no ``--cache`` flag (the file's ``cache`` counts)."""
    args = _extend_args(d, text.replace("BASE", str(bbnli_data())))
    at = args.index("--cache")
    return [*args[:at], *args[at + 2 :]]


def templates_file(d: Path, text: str | None = None) -> Path:
    return write(d / "templates.jsonl", text if text is not None else json.dumps(TEMPLATE) + "\n")


def lm_eval_log(d: Path, base: Base, results: str) -> list[str]:
    """A complete lm-eval log of the base samples whose results file is ``results`` (with N for the
    number of documents)."""
    ids = [json.loads(line)["id"] for line in (base.samples / "samples.jsonl").read_text().splitlines()]
    lines = [
        {
            "doc_id": i,
            "doc": {"id": sample_id, "choice_answers": ["yes", "no"], "answers": "yes/no", "prompt": "true"},
            "resps": [[[-1.0, False]], [[-2.0, False]]],
            "filtered_resps": [[-1.0, False], [-2.0, False]],
        }
        for i, sample_id in enumerate(ids)
    ]
    task, stamp = "nlibias_bbnli_true", "2026-01-01T00-00-00.000000"
    path = write(d / "lm" / f"samples_{task}_{stamp}.jsonl", "".join(json.dumps(x) + "\n" for x in lines))
    write(d / "lm" / f"results_{stamp}.json", results.replace("TASK", task).replace("N", str(len(lines))))
    return score_args(base, path, d)


# -- a key or a column twice, on readers the day's rule was not written for ------------------------------


def _key_twice_cases(case: Add) -> None:
    def lm_eval_results(d: Path, base: Base) -> tuple[list[str], str]:
        results = (
            '{"results": {"TASK": {"acc,none": 0.0}}, "config": {"limit": null},\n'
            ' "n-samples": {"TASK": {"original": N, "effective": 3}},\n'
            ' "n-samples": {"TASK": {"original": N, "effective": N}}}\n'
        )
        args = lm_eval_log(d, base, results)
        return args, "results_2026-01-01T00-00-00.000000.json"

    case("s28c-twice/cli-score-lm-eval-results-n-samples-twice", lm_eval_results)

    def manifest_twice(d: Path, base: Base) -> tuple[list[str], str]:
        cand, ref = pair(d, base)
        path = ref / "manifest.json"
        text = path.read_text(encoding="utf-8").rstrip()
        first = json.loads(text)
        key = next(iter(first))
        path.write_text(text[:-1] + f',\n "{key}": {json.dumps(first[key])}\n}}\n', encoding="utf-8")
        return _gate(cand, ref), str(path)

    case("s28c-twice/cli-gate-baseline-manifest-a-key-twice", manifest_twice)

    def masks_twice(d: Path, base: Base) -> tuple[list[str], str]:
        text = json.dumps(TEMPLATE)[:-1] + ', "masked": "{{GROUP1}} are <mask>."}\n'
        path = templates_file(d, text)
        return ["masks", "validate", str(path), "--source", str(base.bbnli_dir)], f"{path}:1"

    case("s28c-twice/cli-masks-validate-masked-twice", masks_twice)

    def extend_templates_twice(d: Path, base: Base) -> tuple[list[str], str]:
        text = json.dumps(TEMPLATE)[:-1] + ', "subtopic": "woman_is_to_homemaker"}\n'
        path = templates_file(d, text)
        return extend_cli(d, base, "--templates", str(path)), f"{path}:1"

    case("s28c-twice/cli-extend-templates-subtopic-twice", extend_templates_twice)

    def argilla_twice(d: Path, base: Base) -> tuple[list[str], str]:
        run = _vrun(d, base)
        text = f'[{{"id": "{HID}", "responses": {{"judgement": "valid"}},\n  "id": "{QUEUE_ROWS[1][0]}"}}]\n'
        path = write(d / "argilla.json", text)
        return ["validate", "import", str(run), str(path), "--format", "argilla"], str(path)

    case("s28c-twice/cli-validate-import-argilla-id-twice", argilla_twice)

    def explain_summary_twice(d: Path, base: Base) -> tuple[list[str], str]:
        # the command line (a Python call warns as well: bad_input_cases_leftovers, python-rerun-*)
        from bad_input_cases_explain import _generated_run

        run, _ = _generated_run(d, base)
        nlibias.explain(run, ["fake:j"], progress=False, cache=False, bootstrap=0)
        path = run / "explanations" / "explanations.json"
        text = path.read_text(encoding="utf-8").rstrip()
        first = json.loads(text)
        key = next(k for k, v in first.items() if isinstance(v, int | float) and not isinstance(v, bool))
        path.write_text(text[:-1] + f',\n "{key}": {first[key] + 7}\n}}\n', encoding="utf-8")
        args = ["explain", str(run), "--judge", "fake:j", "--no-cache", "--bootstrap", "0"]
        return args, "recomputed: explanations/explanations.json changed"

    case("s28c-twice/cli-explain-rerun-explanations-json-a-key-twice", explain_summary_twice, expect="warn")

    def answers_twice(d: Path, base: Base) -> tuple[list[str], str]:
        from bad_input_cases_s27 import _bbq_score

        args = _bbq_score(d)
        path = Path(args[args.index("--predictions") + 1])
        lines = path.read_text(encoding="utf-8").splitlines()
        lines[0] = lines[0].rstrip()[:-1] + ', "uqa": "unknown"}'
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return args, f"{path}:1"

    case("s28c-twice/cli-score-answer-column-jsonl-the-column-twice", answers_twice)


def _column_twice_cases(case: Add) -> None:
    def expand(
        name: str,
        kind: str,
        header: str,
        rows: str,
        file: str = "x.csv",
        flag: str = "--source",
        at: str = "1",
    ) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            path = write(d / file, header + rows)
            return ["expand", kind, flag, str(path), "--out", str(d / "out")], f"{path}:{at}"

        case(f"s28c-twice/cli-expand-{name}", build)

    bbnli_header = ",".join([*BBNLI_CSV_HEADER[:-1], BBNLI_CSV_HEADER[6]]) + "\n"
    expand(
        "bbnli-csv-a-column-twice",
        "bbnli",
        bbnli_header,
        "".join(",".join(r) + "\n" for r in bbnli_csv_rows()),
        "bbnli.csv",
    )
    expand(
        "wq-nli-hypothesis-column-twice",
        "wq-nli",
        "stereo_premise,counter_premise,hypothesis,hypothesis\n",
        WQ_ROW.rstrip("\n") + ",Some people are kind.\n",
        "wq.csv",
    )
    expand(
        "occupations-premises-csv-premise-twice",
        "occupations",
        "premise,premise\n",
        "A {occupation} is here.,The {occupation} waited.\n",
        "premises.csv",
        "--premises",
        "line 1",
    )

    def queue_twice(d: Path, base: Base) -> tuple[list[str], str]:
        run = _vrun(d, base)
        path = run / "validation" / "queue.csv"
        lines = path.read_text(encoding="utf-8").splitlines()
        lines = [lines[0] + ",note", *(line + ",checked" for line in lines[1:])]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return ["validate", "status", str(run)], f"{path}:1"

    case("s28c-twice/cli-validate-status-queue-note-column-twice", queue_twice)

    def eval_twice(d: Path, base: Base) -> tuple[list[str], str]:
        path = write(
            d / "eval.csv", "premise,hypothesis,label,label\nThe nurse ran.,She ran.,entailment,neutral\n"
        )
        return _finetune(d, "--eval", str(path)), f"{path}:1"

    case("s28c-twice/cli-finetune-eval-csv-label-twice", eval_twice)

    def debias_eval_twice(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        path = write(d / "eval.tsv", "premise\thypothesis\tlabel\tpremise\nA.\tB.\tneutral\tC.\n")
        return (
            lambda: nlibias.debias_models(
                [str(_model_dir(d, CLASSIFIER))],
                _training(d / "data"),
                d / "deb",
                eval_path=path,
                progress=False,
            ),
            f"{path}:1",
        )

    case("s28c-twice/python-debias-eval-tsv-premise-twice", debias_eval_twice)

    def workbook_twice(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        import openpyxl

        book = openpyxl.Workbook()
        sheet = book.active
        sheet.title = "SNLI_Evaluation_Set"
        sheet.append(["premise", "hypothesis", "label", "hypothesis"])
        sheet.append(["The nurse ran.", "A man ran.", "neutral", "A woman ran."])
        path = d / "SNLI_Evaluation_Set.xlsx"
        book.save(path)
        return lambda: nlibias.expand("occupations", path, out_dir=d / "out"), str(path)

    case("s28c-twice/python-expand-occupations-workbook-a-column-twice", workbook_twice)


# -- a blank path where the day's rule does not look (str options, YAML keys, extend's keywords) -----


def _blank_cases(case: Add) -> None:
    def cli(name: str, args: Callable[[Path, Base], list[str]], flag: str) -> None:
        case(f"s28c-blank/cli-{name}", lambda d, b: (args(d, b), flag))

    def swap(args: list[str], flag: str, value: str) -> list[str]:
        args = list(args)
        args[args.index(flag) + 1] = value
        return args

    cli("augment-train-blank", lambda d, b: swap(_augment(d), "--train", ""), "--train")
    cli("finetune-train-a-space", lambda d, b: swap(_finetune(d), "--train", " "), "--train")
    cli("finetune-eval-blank", lambda d, b: _finetune(d, "--eval", ""), "--eval")
    cli("debias-train-blank", lambda d, b: swap(_debias(d), "--train", ""), "--train")
    cli(
        "score-predictions-blank",
        lambda d, b: swap(score_args(b, b.predictions, d), "--predictions", ""),
        "--predictions",
    )
    cli("audit-prompt-blank", lambda d, b: [*audit_args(b.samples, d)[:3], "--generative", "fake:g", "--prompt", "",
                                            *audit_args(b.samples, d)[5:]], "--prompt")  # fmt: skip
    cli("audit-label-map-blank", lambda d, b: [*audit_args(b.samples, d), "--label-map", ""], "--label-map")
    cli("extend-templates-blank", lambda d, b: extend_cli(d, b, "--templates", ""), "--templates")
    cli("augment-word-list-blank", lambda d, b: _augment(d, "--word-list", ""), "--word-list")

    def py(name: str, named: str, call: Callable[[Path, Base], Callable[[], object]]) -> None:
        case(f"s28c-blank/python-{name}", lambda d, b: (call(d, b), named))

    py("extend-out-dir-blank", "out_dir", lambda d, b: lambda: nlibias.extend(
        source=b.bbnli_dir, out_dir="", fill_model="fake", until="masks", progress=False))  # fmt: skip
    py("extend-source-blank", "source", lambda d, b: lambda: nlibias.extend(
        source="", out_dir=d / "next", fill_model="fake", until="masks", progress=False))  # fmt: skip
    py(
        "finetune-model-blank",
        "model",
        lambda d, b: lambda: nlibias.finetune("", _training(d / "data"), d / "ft"),
    )
    py("score-predictions-a-blank-among-two", "predictions",
       lambda d, b: lambda: nlibias.score(b.samples, [b.predictions, ""], bootstrap=0))  # fmt: skip
    py("export-lm-eval-model-path-blank", "model_path",
       lambda d, b: lambda: nlibias.export_lm_eval(b.samples, d / "t", model_path=""))  # fmt: skip

    def yaml(name: str, text: str, line: int) -> None:
        case(
            f"s28c-blank/yaml-extend-{name}",
            lambda d, b: (extend_yaml(d, b, text), f"{d / 'config.yaml'}:{line}"),
        )

    yaml("source-blank", 'source: ""\n', 1)
    yaml("run-dir-blank", 'source: BASE\nrun_dir: ""\n', 2)
    yaml("cache-blank", 'source: BASE\ncache: " "\n', 2)
    yaml("judgements-blank", 'source: BASE\nvalidation:\n  judgements: ""\n', 3)
    yaml("templates-curated-blank", 'source: BASE\ntemplates:\n  curated: ""\n', 3)
    yaml("templates-stopwords-blank", 'source: BASE\ntemplates:\n  derive: true\n  stopwords: " "\n', 4)


# -- an empty settings file, and an empty section, where the day's rule does not look ----------------


def _empty_settings_cases(case: Add) -> None:
    def gate_yaml(name: str, text: str) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            path = _rules(d, text)
            return _gate(*pair(d, base), "--rules", str(path)), str(path)

        case(f"s28c-empty/yaml-gate-rules-{name}", build)

    gate_yaml("an-explicit-null", "~\n")
    gate_yaml("only-a-document-marker", "---\n...\n")
    gate_yaml("measures-empty", "measures:\n")

    def extend(name: str, text: str, line: int) -> None:
        case(
            f"s28c-empty/yaml-extend-{name}",
            lambda d, b: (extend_yaml(d, b, text), f"{d / 'config.yaml'}:{line}"),
        )

    case(
        "s28c-empty/yaml-extend-only-a-document-marker",
        lambda d, b: (extend_yaml(d, b, "---\n"), str(d / "config.yaml")),
    )
    extend("filter-an-empty-section", "source: BASE\nfilter:\n", 2)
    extend("mlm-an-empty-section", "source: BASE\nmlm:\n", 2)

    def py_gate(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        cand, ref = pair(d, base)
        path = _rules(d, "# margin: 0.5\n")
        return lambda: nlibias.gate(cand, ref, rules=path), str(path)

    case("s28c-empty/python-gate-rules-only-comments", py_gate)

    def py_extend(d: Path, base: Base) -> tuple[Callable[[], object], str]:
        path = write(d / "config.yaml", "\n\n")
        return lambda: nlibias.extend(path, until="masks", progress=False), str(path)

    case("s28c-empty/python-extend-config-blank-lines", py_extend)

    def prompt_comments(d: Path, base: Base) -> tuple[list[str], str]:
        path = write(d / "prompts.yaml", "# prompts:\n#   - name: short\n")
        args = [*audit_args(base.samples, d)[:3], "--generative", "fake:g", "--prompt", str(path)]
        return [*args, *audit_args(base.samples, d)[5:]], str(path)

    case("s28c-empty/yaml-prompt-only-comments", prompt_comments)

    def templates_comments(d: Path, base: Base) -> tuple[list[str], str]:
        path = templates_file(d, "# no templates yet\n")
        return extend_cli(d, base, "--templates", str(path)), str(path)

    case("s28c-empty/cli-extend-templates-only-comments", templates_comments)

    def masks_comments(d: Path, base: Base) -> tuple[list[str], str]:
        path = templates_file(d, "# one day\n\n")
        return ["masks", "validate", str(path)], str(path)

    case("s28c-empty/cli-masks-validate-only-comments", masks_comments)

    def judgements_header(d: Path, base: Base) -> tuple[list[str], str]:
        from bad_input_cases_s26 import JUDGEMENT_HEADER

        run = _vrun(d, base)
        path = write(d / "judged.csv", JUDGEMENT_HEADER)
        return ["validate", "import", str(run), str(path)], str(path)

    case("s28c-empty/cli-validate-import-a-header-only-csv", judgements_header)

    def argilla_empty(d: Path, base: Base) -> tuple[list[str], str]:
        run = _vrun(d, base)
        path = write(d / "argilla.json", "[]\n")
        return ["validate", "import", str(run), str(path), "--format", "argilla"], str(path)

    case("s28c-empty/cli-validate-import-argilla-an-empty-list", argilla_empty)

    def queue_header_only(d: Path, base: Base) -> tuple[list[str], str]:
        run = _vrun(d, base)
        path = run / "validation" / "queue.csv"
        path.write_text(",".join(QUEUE_HEADER) + "\n", encoding="utf-8")
        return ["validate", "export", str(run), "--out", str(d / "queue-out.csv")], str(path)

    case("s28c-empty/cli-validate-export-a-header-only-queue", queue_header_only, expect="warn")

    def finetune_eval_empty(d: Path, base: Base) -> tuple[list[str], str]:
        path = write(d / "eval.jsonl", "")
        return _finetune(d, "--eval", str(path)), str(path)

    case("s28c-empty/cli-finetune-eval-empty", finetune_eval_empty)

    def names_comments(d: Path, base: Base) -> tuple[list[str], str]:
        path = write(d / "names.tsv", "# John\tMary\n")
        return _augment(d, "--names", str(path)), str(path)

    case("s28c-empty/cli-augment-names-only-comments", names_comments)


def with_model(args: list[str], flag: str, value: str) -> list[str]:
    args = list(args)
    args[args.index(flag) + 1] = value
    return args
