"""A gate's decision as text, Markdown (a CI job summary) and JUnit XML (what CI systems render).

The JUnit file is valid under Jenkins xUnit's ``junit-10.xsd`` and the Ant JUnit schema
(fixtures under ``tests/fixtures/junit``); a gate that decided nothing still writes both files.

>>> from nlibias.jobs.gate_rules import GateRules
>>> from nlibias.jobs.gate import GateResult
>>> empty = GateResult(True, "nothing tested", (), "cand", "base", GateRules(), "bbnli")
>>> gate_text(empty).splitlines()[0]
'PASS: nothing tested'
"""

from __future__ import annotations

import socket
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from contextlib import ExitStack
from datetime import datetime
from pathlib import Path

from nlibias.io.atomic import atomic_write_text, locked_folder
from nlibias.io.overwrites import Files, refuse_overwrites, run_files
from nlibias.jobs.gate import GateCheck, GateResult
from nlibias.metrics.verdicts import format_value
from nlibias.schema.declared import declared
from nlibias.schema.paths import OutFile
from nlibias.textio.tables import markdown_table, render_table

HEADERS = (
    "Verdict",
    "Model",
    "Measure",
    "Rule",
    "Slice",
    "Baseline [CI]",
    "Candidate [CI]",
    "Δ cand-base [CI]",
    "d [CI]",
    "p_Δ / p_Σ",
    "adj. p",
    "Detects (80%)",
)


def _cells(check: GateCheck) -> list[str]:
    c = check.comparison
    paired = check.rule == "paired"
    tested = paired and c.tested
    rule = f"paired, margin {check.limit:g}" if paired else f"max_abs {check.limit:g}"
    p_values = f"{c.p_delta:.4f}" + (f" / {c.p_sum:.4f}" if c.p_sum is not None else "")
    return [
        "FAIL" if check.failed else check.verdict,
        check.model
        if check.baseline_model in (None, check.model)
        else f"{check.model} vs {check.baseline_model}",
        check.title,
        rule,
        c.slice_name,
        format_value(c.baseline, c.baseline_ci) if paired else "",
        format_value(c.candidate, c.candidate_ci),
        format_value(c.delta, c.delta_ci) if paired else "",
        format_value(c.change, c.change_ci) if paired else "",
        p_values if tested else "",
        f"{c.p_adjusted:.4f}" if tested else "",
        f"{c.detectable:.2f}" if tested and c.detectable is not None else "",
    ]


def _test_note(result: GateResult) -> str:
    rules = result.rules
    if result.baseline is None:
        return (
            f"Test: absolute limits only (no baseline): fail when the candidate's whole {rules.confidence:.0%} "
            f"interval ({rules.bootstrap} resamples, seed {rules.seed}) lies beyond no bias +- max_abs."
        )
    return (
        f"Test: paired bootstrap over the shared resampling units ({rules.bootstrap} resamples, seed "
        f"{rules.seed}); more biased means |cand - no bias| > |base - no bias| + margin, tested as the "
        "intersection of delta = s(cand - base) > margin (p_delta) and sum = s(cand + base - 2 no bias) > "
        "margin (p_sum), s the side of no bias the candidate lies on: p = max(p_delta, p_sum), Holm over "
        f"the slices of each model and measure; fail when the adjusted p < {1 - rules.confidence:g}. "
        "S and delta P (magnitudes) and towards_stereotype read p_delta only. d: the change in bias "
        "(|cand - no bias| - |base - no bias| = min(delta, sum)); above the margin is worse. Detects: the "
        "smallest d the check finds with 80% power on these runs (normal approximation of the bootstrap's "
        "spread at Holm's strictest threshold); a smaller change can pass unseen."
    )


def gate_text(result: GateResult) -> str:
    """``PASS``/``FAIL`` with the reason, then the table of checks."""
    lines = [
        f"{'PASS' if result.passed else 'FAIL'}: {result.reason}",
        f"candidate {result.candidate}; baseline {result.baseline or '(none)'}",
    ]
    if result.checks:
        lines += ["", render_table(HEADERS, [_cells(c) for c in result.checks])]
    lines += ["", _test_note(result)]
    return "\n".join(lines)


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def _md_table(checks: Sequence[GateCheck]) -> list[str]:
    rows = [_cells(check) for check in checks]
    for row, check in zip(rows, checks, strict=True):
        row[0] = f"**{row[0]}**" if check.failed else row[0]
    return [markdown_table(HEADERS, rows), ""]


def gate_markdown(result: GateResult) -> str:
    """A CI job summary: the decision, the failing and untested checks, then the passing ones folded."""
    headline = f"{'✅ PASS' if result.passed else '❌ FAIL'}: {_md(result.reason)}"
    lines = [f"### Bias gate: {headline}", ""]
    lines += [
        f"Candidate `{result.candidate}`, baseline `{result.baseline or '(none)'}`, samples: {result.source}.",
        "",
    ]
    shown = [c for c in result.checks if c.failed or not c.comparison.tested]
    passed = [c for c in result.checks if not c.failed and c.comparison.tested]
    shown.sort(key=lambda c: not c.failed)
    if shown:
        lines += _md_table(shown)
    if passed:
        lines += [
            f"<details><summary>✅ {len(passed)} check{'s' if len(passed) != 1 else ''} passed</summary>",
            "",
            *_md_table(passed),
            "</details>",
            "",
        ]
    lines.append(_test_note(result))
    return "\n".join(lines) + "\n"


def gate_error_markdown(reason: str) -> str:
    """The job summary of a gate that decided nothing (exit 2): why."""
    return f"### Bias gate: ⚠️ NOT DECIDED\n\n{_md(reason)}\n\nNothing was tested: fix the input above and run the gate again.\n"


def _suite(root: ET.Element, name: str, index: int, seconds: float, counts: dict[str, int]) -> ET.Element:
    """A ``testsuite`` with every attribute both schemas require and an empty ``properties`` first."""
    suite = ET.SubElement(root, "testsuite", name=name, package=name, id=str(index))
    for key in ("tests", "failures", "errors", "skipped"):
        suite.set(key, str(counts.get(key, 0)))
    suite.set("time", f"{seconds:.3f}")
    suite.set("timestamp", datetime.now().replace(microsecond=0).isoformat())
    suite.set("hostname", socket.gethostname() or "localhost")
    ET.SubElement(suite, "properties")
    return suite


def gate_junit(result: GateResult) -> ET.Element:
    """JUnit XML: a ``testsuite`` per candidate model, a ``testcase`` per rule and slice (a
    ``failure`` when it failed, ``skipped`` when too few units to test), each an even share of time."""
    checks = result.checks
    share = result.seconds / max(len(checks), 1)
    root = ET.Element("testsuites")  # the Ant schema allows it no attribute; the totals are the suites'
    models: dict[str, list[GateCheck]] = {}
    for check in checks:
        models.setdefault(check.model, []).append(check)
    for index, (model, mine) in enumerate(models.items()):
        counts = {"tests": len(mine), "failures": sum(c.failed for c in mine)}
        counts["skipped"] = sum(not c.comparison.tested for c in mine)
        suite = _suite(root, f"nlibias gate: {model}", index, share * len(mine), counts)
        properties = suite[0]
        for check in mine:
            name = f"{check.rule} {check.comparison.slice_name}"
            case = ET.SubElement(suite, "testcase", name=name, classname=f"{model}.{check.measure}")
            case.set("time", f"{share:.3f}")
            if not check.comparison.tested:
                ET.SubElement(case, "skipped", message=check.detail)
            elif check.failed:
                failure = ET.SubElement(case, "failure", message=check.detail, type=check.rule)
                failure.text = check.detail
            if check.rule == "paired" and check.comparison.tested:
                for key in ("detectable", "p_delta", "p_sum", "p_adjusted"):
                    if (value := getattr(check.comparison, key)) is not None:
                        about = f"{check.measure} {name}: {key}"
                        ET.SubElement(properties, "property", name=about, value=f"{value:.6g}")
        ET.SubElement(suite, "system-out").text = "\n".join(c.detail for c in mine)
        ET.SubElement(suite, "system-err")
    ET.indent(root)
    return root


@declared
def refuse_gate_overwrites(
    candidate: str | Path,
    baseline: str | Path | None,
    *,
    rules: object = None,
    samples: str | Path | None = None,
    junit: OutFile | None = None,
    markdown: OutFile | None = None,
) -> None:
    """Refuse a JUnit or Markdown file that is a folder (:data:`OutFile`), an input or the other
    output (before the gate runs)."""
    inputs: dict[str, Files] = {
        "candidate": run_files(candidate),
        "baseline": None if baseline is None else run_files(baseline),
        "rules": rules if isinstance(rules, str | Path) else None,
        "samples": samples,
    }
    refuse_overwrites({"junit": junit, "markdown": markdown}, inputs)


def gate_error_junit(reason: str, error_type: str) -> ET.Element:
    """The JUnit file of a gate that decided nothing (exit 2): one ``error`` testcase saying why."""
    root = ET.Element("testsuites")
    suite = _suite(root, "nlibias gate", 0, 0.0, {"tests": 1, "errors": 1})
    case = ET.SubElement(suite, "testcase", name="gate", classname="nlibias.gate", time="0.000")
    ET.SubElement(case, "error", message=reason, type=error_type).text = reason
    ET.SubElement(suite, "system-out").text = reason
    ET.SubElement(suite, "system-err")
    ET.indent(root)
    return root


@declared
def _write(junit: OutFile | None, markdown: OutFile | None, xml: ET.Element, md: str) -> list[Path]:
    """The two files of one decision, their folders locked (in one order): another gate writing
    them at once waits, and they are one gate's, not one's XML and the other's summary (a
    refused command line's too, so not at a folder's spelling: :data:`OutFile`)."""
    written = [Path(path) for path in (junit, markdown) if path is not None]
    with ExitStack() as held:
        for folder in sorted({path.parent.resolve() for path in written}):
            held.enter_context(locked_folder(folder))
        if junit is not None:
            text = ET.tostring(xml, encoding="unicode")
            atomic_write_text(Path(junit), '<?xml version="1.0" encoding="utf-8"?>\n' + text + "\n")
        if markdown is not None:
            atomic_write_text(Path(markdown), md)
    return written


def write_gate_files(
    result: GateResult, *, junit: str | Path | None = None, markdown: str | Path | None = None
) -> list[Path]:
    """Write the JUnit XML and the Markdown summary where asked; the paths written."""
    refuse_gate_overwrites(result.candidate, result.baseline, junit=junit, markdown=markdown)
    return _write(junit, markdown, gate_junit(result), gate_markdown(result))


def write_gate_error_files(
    reason: str, error_type: str, *, junit: str | Path | None = None, markdown: str | Path | None = None
) -> list[Path]:
    """Write the JUnit XML and the Markdown summary of a gate that decided nothing (exit 2)."""
    return _write(junit, markdown, gate_error_junit(reason, error_type), gate_error_markdown(reason))
