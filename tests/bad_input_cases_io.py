"""Bad inputs that only the I/O layer can catch (issue #48, part of the corpus of
``bad_input_cases``): an output that is one of the command's inputs or another of its outputs
(gate, report, export, score), a model card that cannot be updated as it is (read-only, a
byte-order mark, front matter never closed, damaged metadata), one run compared with itself, and
explanations the report calls stale given to ``validate explanations``."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from bad_input_cases_validate_explanations import explained_run
from bad_input_corpus import Base, Case

Build = Callable[[Path, Base], tuple[list[str], str]]


def _run_copy(d: Path, base: Base) -> Path:
    run = d / "run"
    shutil.copytree(base.run, run)
    return run


def overwrite_cases() -> list[Case]:
    """An output that resolves to an input of the command, or to its other output."""
    found: list[Case] = []

    def add(name: str) -> Callable[[Build], Build]:
        def register(build: Build) -> Build:
            found.append(Case(f"overwrite/{name}", build))
            return build

        return register

    @add("gate-junit-is-the-candidate-s-metrics")
    def _(d: Path, base: Base) -> tuple[list[str], str]:
        run = _run_copy(d, base)
        return [
            "gate",
            str(run),
            "--baseline",
            str(base.run),
            "--junit",
            str(run / "metrics.json"),
        ], "--junit"

    @add("gate-markdown-is-the-rules-file")
    def _(d: Path, base: Base) -> tuple[list[str], str]:
        rules = d / "rules.yaml"
        rules.write_text("margin: 1\n")
        return ["gate", str(base.run), "--rules", str(rules), "--markdown", str(rules)], "--rules"

    @add("gate-junit-and-markdown-one-file")
    def _(d: Path, base: Base) -> tuple[list[str], str]:
        return ["gate", str(base.run), "--baseline", str(_run_copy(d, base)), "--junit", str(d / "out.txt"),
                "--markdown", str(d / "." / "out.txt")], "--markdown"  # fmt: skip

    @add("gate-junit-a-link-to-the-baseline-s-manifest")
    def _(d: Path, base: Base) -> tuple[list[str], str]:
        baseline = _run_copy(d, base)
        (d / "junit.xml").symlink_to(baseline / "manifest.json")
        return [
            "gate",
            str(base.run),
            "--baseline",
            str(baseline),
            "--junit",
            str(d / "junit.xml"),
        ], "--baseline"

    @add("report-out-is-the-run-s-predictions")
    def _(d: Path, base: Base) -> tuple[list[str], str]:
        run = _run_copy(d, base)
        return ["report", str(run), "--format", "md", "--out", str(run / "predictions.jsonl")], "--out"

    @add("export-out-is-the-run-s-metrics")
    def _(d: Path, base: Base) -> tuple[list[str], str]:
        run = _run_copy(d, base)
        return ["export", "model-index", str(run), "--out", str(run / "metrics.json")], "--out"

    @add("export-out-is-the-card")
    def _(d: Path, base: Base) -> tuple[list[str], str]:
        (d / "README.md").write_text("# m\n")
        return ["export", "model-index", str(base.run), "--card", str(d / "README.md"), "--out",
                str(d / "README.md")], "--card"  # fmt: skip

    @add("score-out-holds-the-predictions")
    def _(d: Path, base: Base) -> tuple[list[str], str]:
        out = d / "scored"
        out.mkdir()
        shutil.copy(base.predictions, out / "tables.txt")  # its predictions.jsonl: rescoring in place
        return ["score", "--samples", str(base.samples), "--predictions", str(out / "tables.txt"),
                "--out", str(out), "--bootstrap", "0"], "--predictions"  # fmt: skip

    @add("validate-export-out-is-the-queue")
    def _(d: Path, base: Base) -> tuple[list[str], str]:
        run = d / "vrun"
        shutil.copytree(base.validation_run, run)
        return ["validate", "export", str(run), "--out", str(run / "validation" / "queue.csv")], "--out"

    @add("masks-derive-out-is-the-stopwords")
    def _(d: Path, base: Base) -> tuple[list[str], str]:
        (d / "stop.txt").write_text("the\na\n")
        return ["masks", "derive", "--source", str(base.bbnli_dir), "--stopwords", str(d / "stop.txt"),
                "--out", str(d / "stop.txt")], "--stopwords"  # fmt: skip

    return found


def card_cases() -> list[Case]:
    """``export model-index --card`` on a card it cannot update as it is."""
    found: list[Case] = []

    def card(name: str, body: bytes, named: str = "", mode: int | None = None) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            path = d / "README.md"
            path.write_bytes(body)
            if mode is not None:
                path.chmod(mode)
            return ["export", "model-index", str(base.run), "--card", str(path)], f"{path}{named}"

        found.append(Case(f"model-card/{name}", build))

    card("read-only", b"---\nlicense: mit\n---\n# m\n", ": is read-only", mode=0o444)
    card("byte-order-mark", b"\xef\xbb\xbf---\nlicense: mit\n---\n# m\n", ":1:")
    card("front-matter-never-closed", b"---\nlicense: mit\n# m\n", ":1:")
    card("yaml-syntax-error", b"---\nlicense: mit\ntags: [a\n---\n# m\n", ":3:")
    card("metadata-a-list", b"---\n- license\n- mit\n---\n# m\n", ":2:")
    card("metadata-with-a-tab", b"---\nlicense: mit\n\ttags: [a]\n---\n# m\n", ":3:")
    card("metadata-a-number", b"---\n5\n---\n# m\n", ":2:")
    return found


def same_run_cases() -> list[Case]:
    """``report --compare`` of one run, or of one run named twice."""
    found: list[Case] = []

    def compare(name: str, spellings: Callable[[Path], list[str]], named: str) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            run = _run_copy(d, base)
            (d / "link").symlink_to(run)
            return ["report", *spellings(run), "--compare", "--format", "md"], named

        found.append(Case(f"same-run/{name}", build))

    compare("compare-one-run", lambda run: [str(run)], "--compare")
    compare("compare-twice", lambda run: [str(run), str(run)], "RUNS")
    compare("compare-dot-slash-and-slash", lambda run: [f"{run.parent}/./run", f"{run}/"], "RUNS")
    compare("compare-a-link", lambda run: [str(run), str(run.parent / "link")], "RUNS")
    compare("compare-its-metrics-file", lambda run: [str(run), str(run / "metrics.json")], "RUNS")
    return found


def stale_explanations_cases() -> list[Case]:
    """Explanations the report calls stale are not queued for human validation."""
    found: list[Case] = []

    def stale(name: str, edit: Callable[[Path], None]) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            run = explained_run(d, base)
            edit(run)
            return ["validate", "explanations", str(run)], "not current"

        found.append(Case(f"stale-explanations/{name}", build))

    def drop_last_row(run: Path) -> None:
        rows = run / "explanations" / "explanations.jsonl"
        rows.write_text(
            "".join(rows.read_text(encoding="utf-8").splitlines(keepends=True)[:-1]), encoding="utf-8"
        )

    def other_summary(run: Path) -> None:
        summary = run / "explanations" / "explanations.json"
        summary.write_text(
            summary.read_text(encoding="utf-8").replace('"threshold": 0.5', '"threshold": 0.9')
        )

    def other_predictions(run: Path) -> None:
        predictions = run / "predictions.jsonl"
        predictions.write_text(predictions.read_text(encoding="utf-8") + "\n")

    stale("a-row-removed", drop_last_row)
    stale("summary-replaced", other_summary)
    stale("predictions-changed-since", other_predictions)
    return found


def io_cases() -> list[Case]:
    """Every case of this module."""
    return [*overwrite_cases(), *card_cases(), *same_run_cases(), *stale_explanations_cases()]
