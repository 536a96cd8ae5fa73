"""The run's caveats (from its own metadata), shown before the numbers, and its provenance."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nlibias.report.html_parts import escape, key_values, model_key, table
from nlibias.report.load import Run, read_json
from nlibias.report.metric_readers import overall_of
from nlibias.report.verdict_block import magnitude_notes, sample_notes, tie_notes

#: Fewer bias-audit samples than this gets a caveat (wide intervals).
FEW_SAMPLES = 1000
#: A model whose id names fewer parameters than this gets a caveat.
SMALL_MODEL_PARAMETERS = 1e9
_SIZE = re.compile(r"(?<![A-Za-z0-9.])(\d+(?:\.\d+)?)([MB])(?![A-Za-z])", re.IGNORECASE)


@dataclass(frozen=True)
class Caveat:
    """One thing to read before the numbers: its ``kind`` (``demo``, ``small-model``, ...) and text."""

    kind: str
    text: str
    severe: bool = False


def parameters_named(model_id: str) -> float | None:
    """The parameter count a model id states (``SmolLM2-135M`` → 1.35e8), or None."""
    found = _SIZE.findall(model_id)
    if not found:
        return None
    number, unit = found[-1]
    return float(number) * (1e6 if unit.upper() == "M" else 1e9)


#: Keys of a model's description (nested ones too) that name its weights.
_NAMING_KEYS = ("model", "model_id", "gguf_file", "repo", "name_or_path", "path")


def _values(description: Any, keys: Sequence[str]) -> list[str]:
    """The text values of ``keys`` in a model's description, nested ones too, in order."""
    found: list[str] = []
    for key, value in description.items() if isinstance(description, Mapping) else ():
        if key in keys and isinstance(value, str):
            found.append(value)
        elif isinstance(value, Mapping):
            found += _values(value, keys)
    return found


def _model_sizes(run: Run) -> dict[str, float]:
    """Each described model's id and the smallest parameter count any of its names states."""
    described = run.run_info.get("models")
    sizes: dict[str, float] = {}
    for desc in described.values() if isinstance(described, Mapping) else []:
        named = [(n, parameters_named(n)) for n in _values(desc, _NAMING_KEYS)]
        counts = [(size, n) for n, size in named if size is not None]
        if counts:
            size, name = min(counts)
            model = desc.get("model") if isinstance(desc, Mapping) else None
            label = name if not isinstance(model, str) or model == name else f"{model} ({name})"
            sizes.setdefault(label, size)
    return sizes


#: Weights' dtypes below float32's precision: a run in one of them gets a caveat.
REDUCED_PRECISION = ("bfloat16", "float16")


def _reduced_precision(run: Run) -> dict[str, str]:
    """Each described model that ran in a :data:`REDUCED_PRECISION` dtype (possibly nested), and it."""
    described = run.run_info.get("models")
    found: dict[str, str] = {}
    for key, desc in described.items() if isinstance(described, Mapping) else []:
        reduced = [d for d in _values(desc, ("dtype",)) if d in REDUCED_PRECISION]
        if reduced:
            found[str(desc.get("model") or key)] = reduced[0]
    return found


def _unvalidated(run: Run) -> int:
    """How many samples are marked ``unvalidated``; -1 when only the dataset card says so."""
    count = 0
    for sample in run.samples():
        validation = sample.provenance.get("validation") if sample.provenance else None
        if isinstance(validation, Mapping) and validation.get("judgement") == "unvalidated":
            count += 1
    if count:
        return count
    card = run.card_text() or ""
    return -1 if "validation_status: unvalidated" in card or "**UNVALIDATED" in card else 0


def run_caveats(run: Run) -> list[Caveat]:
    """The caveats of one run, most important first."""
    caveats = [
        Caveat("samples-changed", change + ": example pairs are left out.", True)
        for change in run.input_changes
    ]
    demo = run.metrics.get("demo")
    if isinstance(demo, Mapping):
        text = (
            demo.get("disclaimer") or "This run is the demo: a demonstration of the pipeline, not a verdict."
        )
        caveats.append(Caveat("demo", f"Demonstration, not a verdict. {text}", True))
    unvalidated = _unvalidated(run)
    if unvalidated:
        many = f"{unvalidated:,} of the samples are" if unvalidated > 0 else "The dataset is"
        text = (
            f"{many} UNVALIDATED: no human judged the generated hypotheses; they may be incoherent "
            "or state no stereotype. Do not report these scores as BBNLI-next results."
        )
        caveats.append(Caveat("unvalidated", text, True))
    for model, size in _model_sizes(run).items():
        text = (
            f"{model} is a small model ({size / 1e6:,.0f}M parameters by its name): its answers "
            "say little about larger models, and a low bias score may only mean it rarely says yes."
        )
        caveats += [Caveat("small-model", text)] if size < SMALL_MODEL_PARAMETERS else []
    for model, dtype in _reduced_precision(run).items():
        text = (
            f"{model} ran in {dtype}, a reduced precision: its probabilities differ from float32's "
            "(bfloat16 moved a small classifier's by up to 0.29 and changed 0.8% of its labels, "
            "docs/scaling.md). For numbers to compare with a CPU run or a paper, audit with "
            "`--dtype float32`."
        )
        caveats.append(Caveat("reduced-precision", text))
    caveats += [Caveat("published-premises", note) for note in _published_premise_notes(run)]
    caveats += [Caveat("subset-or-unscored", note) for note in sample_notes(run.metrics)]
    caveats += [Caveat("tp-ties", note) for note in tie_notes(run.metrics)]
    caveats += [Caveat("magnitudes", note) for note in magnitude_notes(run.metrics)]
    n_samples = run.metrics.get("n_samples")
    if isinstance(n_samples, int) and 0 < n_samples < FEW_SAMPLES:
        text = (
            f"Only {n_samples:,} samples were audited: read every value with its 95% interval; "
            "differences inside the intervals are not evidence of anything."
        )
        caveats.append(Caveat("few-samples", text))
    boot = run.metrics.get("bootstrap")
    if isinstance(boot, Mapping) and boot.get("resamples") == 0:
        caveats.append(Caveat("no-intervals", "No confidence intervals (bootstrap resamples 0)."))
    degenerate = max(
        (int(overall_of(m).get("degenerate_pairs") or 0) for m in run.models.values()), default=0
    )
    if degenerate:
        text = f"{degenerate} degenerate pairs (pro and anti texts identical, as in the BBNLI source) are"
        caveats.append(Caveat("degenerate-pairs", text + " included in the measures."))
    return caveats


EXPANSION_SUMMARY = "expansion.json"
"""The summary ``nlibias expand`` writes beside the samples."""


def _published_premise_notes(run: Run) -> list[str]:
    """One note per evaluation set whose published premises a premises file would refuse, from
    the expansion summary beside the run's samples."""
    folder = run.dataset_folder()
    sets = read_json(folder / EXPANSION_SUMMARY).get("eval_sets") if folder is not None else None
    notes = []
    for record in sets if isinstance(sets, list) else []:
        caveats = record.get("premise_caveats") if isinstance(record, Mapping) else None
        if isinstance(caveats, Mapping) and isinstance(caveats.get("rows"), int) and caveats["rows"] > 0:
            notes.append(
                f"{caveats['rows']:,} premises of the {record.get('eval_set')} set would be refused in a "
                f"premises file ({caveats.get('gendered_word')} with a gendered word, "
                f"{caveats.get('occupation_not_named')} not naming their row's occupation): read as the "
                f"authors published them; {EXPANSION_SUMMARY} lists them (premise_caveats)."
            )
    return notes


def _with_code(text: str) -> str:
    """Escaped text with backtick-quoted commands as ``<code>``."""
    parts = escape(text).split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: leave the text as it is
        return escape(text)
    return "".join(f"<code>{part}</code>" if i % 2 else part for i, part in enumerate(parts))


def caveat_line(text: str) -> tuple[str, str]:
    """A caveat's first clause (up to ``: `` or ``. ``) as its one line, and the rest."""
    cuts = [i for i in (text.find(": "), text.find(". ")) if i > 0]
    if not cuts:
        return text, ""
    cut = min(cuts)
    rest = text[cut + 2 :].strip()
    return text[:cut].rstrip(".") + ".", rest[:1].upper() + rest[1:]


#: Caveats another one already says (the demo's disclaimer).
_SAID_BY = {"small-model": "demo", "few-samples": "demo"}


def merged_caveats(runs: Sequence[Run]) -> list[tuple[list[str], Caveat, list[Caveat]]]:
    """The caveats of ``runs``, one per text naming its runs, a caveat another says already folded
    under it: ``(labels, caveat, folded caveats)``."""
    merged: list[tuple[list[str], Caveat, list[Caveat]]] = []
    by_text: dict[str, int] = {}
    for run in runs:
        caveats = run_caveats(run)
        kinds = {c.kind for c in caveats}
        folded = {k: [c for c in caveats if _SAID_BY.get(c.kind) == k] for k in kinds}
        for caveat in caveats:
            if _SAID_BY.get(caveat.kind) in kinds:
                continue
            under = folded.get(caveat.kind, [])
            key = caveat.text + "\n".join(c.text for c in under)
            if key in by_text:
                merged[by_text[key]][0].append(run.label)
                continue
            by_text[key] = len(merged)
            merged.append(([run.label], caveat, under))
    return merged


def caveats_html(runs: Sequence[Run]) -> tuple[str, list[Caveat]]:
    """The caveats box (``""``: none), one line each with the rest in a ``<details>``, and its caveats."""
    merged = merged_caveats(runs)
    if not merged:
        return "", []
    several = len(runs) > 1
    items = []
    for labels, caveat, under in merged:
        line, rest = caveat_line(caveat.text)
        more = [rest] if rest else []
        more += [c.text for c in under]
        who = f"<b>{escape(', '.join(labels))}:</b> " if several else ""
        head = who + _with_code(line)
        body = "".join(f"<p>{_with_code(text)}</p>" for text in more)
        item = f"<details><summary>{head}</summary>{body}</details>" if more else head
        kind = " ".join(k for k, on in (("severe", caveat.severe), ("more", bool(more))) if on)
        items.append(f'<li class="{kind}">{item}</li>')
    return (
        f'<section id="caveats" class="caveats"><h2>Read this first</h2><ul>{"".join(items)}</ul></section>',
        [c for _, c, _ in merged],
    )


_RUN_FACTS = (
    "samples", "predictions", "cache", "finished", "nlibias", "python", "torch", "transformers", "platform",
)  # fmt: skip
"""What the provenance table shows of the manifest's ``run``, in this order."""


def _facts(run: Run) -> list[tuple[str, Any]]:
    info: Mapping[str, Any] = run.run_info  # a TypedDict read by the names listed above
    facts: list[tuple[str, Any]] = [
        ("source", run.metrics.get("source")),
        ("samples", run.metrics.get("n_samples")),
    ]
    boot = run.metrics.get("bootstrap")
    if isinstance(boot, Mapping):
        facts.append(("bootstrap", ", ".join(f"{k}={v}" for k, v in boot.items())))
    for key in _RUN_FACTS:
        if info.get(key) is not None:
            facts.append((f"run.{key}" if key == "samples" else key, info[key]))
    for key, value in (run.run_json or {}).items():
        if not isinstance(value, Mapping | list):
            facts.append((f"run.json {key}", value))
    return facts


def _nested(desc: Mapping[str, Any], *keys: str) -> str:
    value: Any = desc
    for key in keys:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value if isinstance(value, str) else ""


def provenance_html(runs: Sequence[Run]) -> str:
    """Each run's facts, and each model's backend, id, revision, settings and statistics."""
    parts: list[str] = []
    for run in runs:
        parts.append(f'<h3>{escape(run.label)} <span class="muted">({escape(run.path)})</span></h3>')
        rows = [[escape(k), escape(v)] for k, v in _facts(run) if v is not None]
        parts.append(table(["", "value"], rows, numeric_from=99))
        described = run.run_info.get("models")
        if not isinstance(described, Mapping) or not described:
            continue
        model_rows = []
        for key, desc in described.items():
            desc = desc if isinstance(desc, Mapping) else {}
            stats = desc.get("stats")
            backend = desc.get("backend") or _nested(desc, "identity", "backend")
            names = [escape(v) for v in (backend, desc.get("model", ""), desc.get("revision") or "–")]
            settings = key_values(desc, skip=("stats", "model", "revision", "backend"))
            stats_html = key_values(stats) if isinstance(stats, Mapping) else ""
            model_rows.append([model_key(key), *names, settings, stats_html])
        headers = ["model key", "backend", "model", "revision", "settings", "stats"]
        parts.append(table(headers, model_rows, numeric_from=99, stack=True))
    return "".join(parts)
