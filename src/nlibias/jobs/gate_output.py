"""A gate's decision as text, Markdown (a CI job summary) and JUnit XML (what CI systems render).

The text and the Markdown start with ``PASS`` or ``FAIL`` and the reason, then one row per check:
measure, slice, baseline [CI], candidate [CI], d [CI] (the change in bias the test reads: its sign
says worse or better, where cand − base may not), adjusted p, verdict. The JUnit file holds a
testsuite per model and a testcase per rule and slice; a failing check has a ``failure`` element
whose message holds its numbers.

>>> from nlibias.jobs.gate_rules import GateRules
>>> from nlibias.jobs.gate import GateResult
>>> empty = GateResult(True, "nothing tested", (), "cand", "base", GateRules(), "bbnli")
>>> gate_text(empty).splitlines()[0]
'PASS: nothing tested'
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from nlibias.jobs.gate import GateCheck, GateResult
from nlibias.metrics.verdicts import format_value

HEADERS = (
    "Model",
    "Measure",
    "Rule",
    "Slice",
    "Baseline [CI]",
    "Candidate [CI]",
    "d [CI]",
    "adj. p",
    "Verdict",
)


def _cells(check: GateCheck) -> list[str]:
    c = check.comparison
    paired = check.rule == "paired"
    rule = f"paired, margin {check.limit:g}" if paired else f"max_abs {check.limit:g}"
    return [
        check.model
        if check.baseline_model in (None, check.model)
        else f"{check.model} vs {check.baseline_model}",
        check.title,
        rule,
        c.slice_name,
        format_value(c.baseline, c.baseline_ci) if paired else "",
        format_value(c.candidate, c.candidate_ci),
        format_value(c.change, c.change_ci) if paired else "",
        f"{c.p_adjusted:.4f}" if paired and c.tested else "",
        "FAIL" if check.failed else check.verdict,
    ]


def _headline(result: GateResult) -> str:
    return f"{'PASS' if result.passed else 'FAIL'}: {result.reason}"


def _test_note(result: GateResult) -> str:
    rules = result.rules
    if result.baseline is None:
        return (
            f"Test: absolute limits only (no baseline): fail when the candidate's whole {rules.confidence:.0%} "
            f"interval ({rules.bootstrap} resamples, seed {rules.seed}) lies beyond no bias +- max_abs."
        )
    return (
        f"Test: paired percentile bootstrap over the shared resampling units ({rules.bootstrap} resamples, "
        f"seed {rules.seed}), one-sided, Holm over the slices of each model and measure; "
        f"fail when the adjusted p < {1 - rules.confidence:g}. d: the change in bias the test reads "
        "(|cand - no bias| - |base - no bias|; towards_stereotype: cand - base; S and delta P: the change "
        "towards their worse end); above the margin is worse."
    )


def gate_text(result: GateResult) -> str:
    """``PASS``/``FAIL`` with the reason, then the table of checks."""
    from nlibias.textio.tables import render_table

    lines = [_headline(result), f"candidate {result.candidate}; baseline {result.baseline or '(none)'}"]
    if result.checks:
        lines += ["", render_table(HEADERS, [_cells(c) for c in result.checks])]
    lines += ["", _test_note(result)]
    return "\n".join(lines)


def gate_markdown(result: GateResult) -> str:
    """A GitHub/GitLab job summary: the decision, then the table of checks (failures in bold)."""

    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    lines = [f"### Bias gate: {'✅' if result.passed else '❌'} {cell(_headline(result))}", ""]
    lines += [
        f"Candidate `{result.candidate}`, baseline `{result.baseline or '(none)'}`, samples: {result.source}.",
        "",
    ]
    if result.checks:
        lines += ["| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
        for check in result.checks:
            cells = [cell(x) for x in _cells(check)]
            if check.failed:
                cells[-1] = f"**{cells[-1]}**"
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    lines.append(_test_note(result))
    return "\n".join(lines) + "\n"


def gate_junit(result: GateResult) -> ET.Element:
    """JUnit XML: ``testsuites`` > a ``testsuite`` per candidate model > a ``testcase`` per rule and
    slice (``classname`` the model and measure); a failing check holds a ``failure`` element, a
    slice of too few units to test a ``skipped`` one (as CI systems show a skipped test)."""
    root = ET.Element("testsuites", name="nlibias gate", tests=str(len(result.checks)))
    root.set("failures", str(sum(c.failed for c in result.checks)))
    root.set("skipped", str(sum(not c.comparison.tested for c in result.checks)))
    models: dict[str, list[GateCheck]] = {}
    for check in result.checks:
        models.setdefault(check.model, []).append(check)
    for model, checks in models.items():
        suite = ET.SubElement(root, "testsuite", name=f"nlibias gate: {model}", tests=str(len(checks)))
        suite.set("failures", str(sum(c.failed for c in checks)))
        suite.set("errors", "0")
        suite.set("skipped", str(sum(not c.comparison.tested for c in checks)))
        for check in checks:
            case = ET.SubElement(suite, "testcase", name=f"{check.rule} {check.comparison.slice_name}")
            case.set("classname", f"{model}.{check.measure}")
            if not check.comparison.tested:
                ET.SubElement(case, "skipped", message=check.detail)
            elif check.failed:
                failure = ET.SubElement(case, "failure", message=check.detail, type=check.rule)
                failure.text = check.detail
            else:
                ET.SubElement(case, "system-out").text = check.detail
    ET.indent(root)
    return root


def refuse_gate_overwrites(
    candidate: str | Path,
    baseline: str | Path | None,
    *,
    rules: object = None,
    samples: str | Path | None = None,
    junit: str | Path | None = None,
    markdown: str | Path | None = None,
) -> None:
    """Refuse, before the gate computes anything, a JUnit or Markdown file that is a file of either
    run, the rules file (``rules`` when it is a path), the samples file, or the other output."""
    from nlibias.io.overwrites import Files, refuse_overwrites, run_files

    inputs: dict[str, Files] = {
        "candidate": run_files(candidate),
        "baseline": None if baseline is None else run_files(baseline),
        "rules": rules if isinstance(rules, str | Path) else None,
        "samples": samples,
    }
    refuse_overwrites({"junit": junit, "markdown": markdown}, inputs)


def write_gate_files(
    result: GateResult, *, junit: str | Path | None = None, markdown: str | Path | None = None
) -> list[Path]:
    """Write the JUnit XML and the Markdown summary where asked (neither may be a file of the
    runs, nor both one file); the paths written."""
    from nlibias.io.atomic import atomic_write_text

    refuse_gate_overwrites(result.candidate, result.baseline, junit=junit, markdown=markdown)
    written: list[Path] = []
    if junit is not None:
        text = ET.tostring(gate_junit(result), encoding="unicode")
        atomic_write_text(Path(junit), '<?xml version="1.0" encoding="utf-8"?>\n' + text + "\n")
        written.append(Path(junit))
    if markdown is not None:
        atomic_write_text(Path(markdown), gate_markdown(result))
        written.append(Path(markdown))
    return written
