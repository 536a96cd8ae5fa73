"""Bad inputs of ``nlibias validate explanations`` and the validate commands on an explained audit
run (issue #36), part of the corpus of ``bad_input_cases``: a run without explanations, a damaged
``explanations.jsonl`` (bad JSON, a truncated line, a missing field, a wrong type, an unknown
label, no rows), sizes and judges a user can get wrong, a redraw that leaves answered items out,
and the hypotheses-only commands (import, export, resolve) and ``status`` on such a run."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bad_input_corpus import Base, Case
from nlibias.runtime.model_set import ModelSet
from nlibias.runtime.options import ModelOptions, RunOptions

Build = Callable[[Path, Base], tuple[list[str], str]]
_EXPLAINED: dict[Path, Path] = {}


def explained_run(d: Path, base: Base) -> Path:
    """A copy (in ``d``) of a fake generator's generated answers on the base samples, explained
    by a fake judge; the run is made once per base and copied for each case."""
    if base.root not in _EXPLAINED:
        from nlibias.jobs.audit import run_audit
        from nlibias.jobs.explain import run_explain

        made = base.root / "explained"
        run_audit(
            base.samples,
            ModelSet.of(generative=["fake:g"], prompts=["true"]),
            run=RunOptions(cache=False, bootstrap=0, progress=False),
            out_dir=made,
            options=ModelOptions(mode="generated"),
        )
        run_explain(made, ["fake:j"], cache=False, bootstrap=0, progress=False)
        _EXPLAINED[base.root] = made
    run = d / "G"
    shutil.copytree(_EXPLAINED[base.root], run)
    return run


def _jsonl(run: Path) -> Path:
    return run / "explanations" / "explanations.jsonl"


def _labelled_line(run: Path) -> int:
    """The 0-based index of the first row with a label (an answer with an explanation)."""
    lines = _jsonl(run).read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines) if json.loads(line).get("label"))


def _edit_row(edit: Callable[[dict[str, Any]], None], field: str) -> Build:
    """A case whose first labelled row is edited; the message must name the field."""

    def build(d: Path, base: Base) -> tuple[list[str], str]:
        run = explained_run(d, base)
        lines = _jsonl(run).read_text(encoding="utf-8").splitlines()
        at = _labelled_line(run)
        row = json.loads(lines[at])
        edit(row)
        lines[at] = json.dumps(row)
        _jsonl(run).write_text("\n".join(lines) + "\n", encoding="utf-8")
        return ["validate", "explanations", str(run)], f"{_jsonl(run)}:{at + 1}: field {field}"

    return build


def _lines(change: Callable[[list[str]], tuple[list[str], int]]) -> Build:
    """A case whose lines are changed; ``change`` returns the new lines and the line to name."""

    def build(d: Path, base: Base) -> tuple[list[str], str]:
        run = explained_run(d, base)
        lines, line = change(_jsonl(run).read_text(encoding="utf-8").splitlines())
        _jsonl(run).write_text("\n".join(lines), encoding="utf-8")
        return ["validate", "explanations", str(run)], f"{_jsonl(run)}:{line}"

    return build


def _draw(*options: str, named: str) -> Build:
    def build(d: Path, base: Base) -> tuple[list[str], str]:
        return ["validate", "explanations", str(explained_run(d, base)), *options], named

    return build


def _drawn_run(d: Path, base: Base) -> Path:
    from nlibias.validation.explanation_queue import draw_explanation_queue

    run = explained_run(d, base)
    draw_explanation_queue(run, size=3, seed=0)
    return run


def _file_cases() -> list[Case]:
    def not_explained(d: Path, base: Base) -> tuple[list[str], str]:
        shutil.copytree(base.run, d / "run")
        return ["validate", "explanations", str(d / "run")], str(_jsonl(d / "run"))

    def no_run(d: Path, base: Base) -> tuple[list[str], str]:
        return ["validate", "explanations", str(d / "missing")], f"{d / 'missing'}: no such run directory"

    def no_summary(d: Path, base: Base) -> tuple[list[str], str]:
        run = explained_run(d, base)
        summary = run / "explanations" / "explanations.json"
        summary.unlink()
        return ["validate", "explanations", str(run)], f"{summary}: missing"

    def empty(d: Path, base: Base) -> tuple[list[str], str]:
        run = explained_run(d, base)
        _jsonl(run).write_text("", encoding="utf-8")
        return ["validate", "explanations", str(run)], f"{_jsonl(run)}: no rows"

    return [
        Case("validate-explanations/not-explained", not_explained),
        Case("validate-explanations/no-run", no_run),
        Case("validate-explanations/no-summary", no_summary),
        Case("validate-explanations/no-rows", empty),
        Case("validate-explanations/bad-json-line", _lines(lambda ls: ([*ls[:2], "{not json", *ls[2:]], 3))),
        Case("validate-explanations/truncated", _lines(lambda ls: ([*ls[:-1], ls[-1][:-30]], len(ls)))),
        Case("validate-explanations/not-an-object", _lines(lambda ls: ([*ls[:1], "[1, 2]", *ls[1:]], 2))),
        Case("validate-explanations/missing-judge", _edit_row(lambda r: r.pop("judge"), "judge")),
        Case("validate-explanations/missing-premise", _edit_row(lambda r: r.pop("premise"), "premise")),
        Case("validate-explanations/premise-a-number", _edit_row(lambda r: r.update(premise=3), "premise")),
        Case("validate-explanations/unknown-label", _edit_row(lambda r: r.update(label="great"), "label")),
        Case("validate-explanations/label-a-number", _edit_row(lambda r: r.update(label=1), "label")),
        Case(
            "validate-explanations/bad-lm-label", _edit_row(lambda r: r.update(lm_label="fair"), "lm_label")
        ),
        Case("validate-explanations/empty-model", _edit_row(lambda r: r.update(model=""), "model")),
    ]


def _option_cases() -> list[Case]:
    def redraw(d: Path, base: Base) -> tuple[list[str], str]:
        """Answers given on a queue of 3, then a queue of 1 with another seed: answered items left out."""
        from nlibias.validation.explanation_queue import read_explanation_queue
        from nlibias.validation.store import AnnotationStore

        run = _drawn_run(d, base)
        queue = read_explanation_queue(run)
        store = AnnotationStore.for_run(run)
        for item in queue.items:
            store.record_explanation(item.item_id, "ana", "biased", fingerprint=queue.fingerprint)
        return ["validate", "explanations", str(run), "--size", "1", "--seed", "5"], "warning"

    return [
        Case("validate-explanations/size-zero", _draw("--size", "0", named="--size")),
        Case("validate-explanations/size-negative", _draw("--size", "-3", named="--size")),
        Case("validate-explanations/size-not-a-number", _draw("--size", "many", named="--size")),
        Case("validate-explanations/size-beyond-answers", _draw("--size", "100000", named="warning"), "warn"),
        Case("validate-explanations/seed-not-a-number", _draw("--seed", "x", named="--seed")),
        Case("validate-explanations/unknown-judge", _draw("--judge", "nope", named="--judge 'nope'")),
        Case("validate-explanations/empty-judge", _draw("--judge", "", named="--judge ''")),
        Case("validate-explanations/redraw-leaves-answers-out", redraw, "warn"),
    ]


def _run_cases() -> list[Case]:
    """The other validate commands on an explained audit run."""

    def status_queue_damaged(d: Path, base: Base) -> tuple[list[str], str]:
        run = _drawn_run(d, base)
        queue = run / "validation" / "explanations_queue.json"
        queue.write_text(queue.read_text(encoding="utf-8")[:50], encoding="utf-8")
        return ["validate", "status", str(run)], str(queue)

    def status_explanations_gone(d: Path, base: Base) -> tuple[list[str], str]:
        run = _drawn_run(d, base)
        _jsonl(run).unlink()
        return ["validate", "status", str(run)], str(_jsonl(run))

    def status_no_queue(d: Path, base: Base) -> tuple[list[str], str]:
        return ["validate", "status", str(explained_run(d, base))], "nlibias validate explanations RUN"

    def hypotheses_only(command: str) -> Build:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            run = _drawn_run(d, base)
            judged = d / "judged.csv"
            judged.write_text("item_id,annotator,label\nx0,ana,biased\n", encoding="utf-8")
            extra = [str(judged)] if command == "import" else []
            return ["validate", command, str(run), *extra], "validation/explanations_queue.json"

        return build

    return [
        Case("validate-status/explanations-queue-damaged", status_queue_damaged),
        Case("validate-status/explanations-gone", status_explanations_gone),
        Case("validate-status/explained-run-without-queue", status_no_queue),
        Case("validate-import/explanations-run", hypotheses_only("import")),
        Case("validate-export/explanations-run", hypotheses_only("export")),
        Case("validate-resolve/explanations-run", hypotheses_only("resolve")),
    ]


def validate_explanations_cases() -> list[Case]:
    return [*_file_cases(), *_option_cases(), *_run_cases()]
