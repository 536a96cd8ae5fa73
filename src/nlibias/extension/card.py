"""The dataset card (``README.md``): a YAML header (``configs:`` for ``datasets.load_dataset``,
``nlibias_run:``), whether humans validated the hypotheses, then the paper's tables (9-12, 3, 4)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from nlibias.benchmarks.bbnli_source import BBNLI_COMMIT, BBNLI_DATA
from nlibias.textio.tables import markdown_table


def domain_subtopic_rows(rows: Sequence[Mapping[str, Any]], key: str = "count") -> list[list[Any]]:
    """Paper layout: domain, subtopic, count; a ``Total`` row after each domain and an ``all`` row.

    >>> domain_subtopic_rows([{"domain": "g", "subtopic": "s", "count": 2}])
    [['g', 's', 2], ['g', 'Total', 2], ['all', 'Total', 2]]
    """
    out: list[list[Any]] = []
    grand = 0
    for domain in sorted({r["domain"] for r in rows}):
        members = [r for r in rows if r["domain"] == domain]
        for row in sorted(members, key=lambda r: str(r["subtopic"]).lower()):
            out.append([domain, row["subtopic"], row[key]])
        total = sum(int(r[key]) for r in members)
        grand += total
        out.append([domain, "Total", total])
    out.append(["all", "Total", grand])
    return out


def first_line(info: Mapping[str, Any]) -> str:
    """The card's first body line: validation status up front."""
    validation = info["validation"]
    if validation["status"] == "unvalidated":
        return (
            "**UNVALIDATED: no human has judged these generated hypotheses** (built with `--unvalidated`); "
            "they may be incoherent or express no stereotype. Do not report bias scores on it as BBNLI-next results."
        )
    valid = validation["categories"].get("valid", {}).get("hypotheses", 0)
    return f"Validated: only the {valid} generated hypotheses that human judges marked valid (and their twins) are included."


def render_card(info: Mapping[str, Any]) -> str:
    """The full ``README.md`` text from the pipeline's collected ``info`` (see :mod:`.dataset`)."""
    header = card_header(info)
    parts = [
        "---",
        yaml.safe_dump(header, sort_keys=False, allow_unicode=True).rstrip(),
        "---",
        first_line(info),
        "",
        *intro_section(info, header["pretty_name"]),
        *models_section(model_rows(info)),
        *generation_tables(info),
        *fill_comparison_section(info.get("fill_comparison", {})),
        *outcome_tables(info),
        *closing_section(),
    ]
    return "\n".join(parts)


def published_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """The configuration as the card records it: no local path (the source by :func:`source_record`).

    >>> published_config({"source": None, "templates_file": "/home/me/t.yaml", "templates_sha256": "ab"})
    {'source': None, 'templates_sha256': 'ab'}
    """
    published = dict(config)
    published.pop("templates_file", None)
    if "source" in published:
        published["source"] = source_record(published["source"], published.get("subtopics") or [])
    return published


def source_record(source: str | None, subtopics: Sequence[str]) -> dict[str, Any] | None:
    """The BBNLI source without its local path: the pinned release (when every file used matches it)
    and one SHA-256 over the files' sorted ``path<TAB>sha256`` lines."""
    if source is None:
        return None
    root = Path(source)
    files = sorted(f for name in subtopics for f in root.glob(f"*/{name}.json")) if root.is_dir() else []
    digests = {f.relative_to(root).as_posix(): hashlib.sha256(f.read_bytes()).hexdigest() for f in files}
    if not digests and root.is_file():  # BBNLI's expanded CSV
        digests = {root.name: hashlib.sha256(root.read_bytes()).hexdigest()}
    pinned = {rel: digest for rel, (_, digest) in BBNLI_DATA.files.items()}
    release = (
        f"feyzaakyurek/bbnli@{BBNLI_COMMIT}"
        if digests and all(pinned.get(rel) == digest for rel, digest in digests.items())
        else None
    )
    lines = "".join(f"{rel}\t{digest}\n" for rel, digest in sorted(digests.items()))
    return {
        "name": "bbnli",
        "release": release,
        "files": len(digests),
        "sha256": hashlib.sha256(lines.encode()).hexdigest(),
    }


def card_header(info: Mapping[str, Any]) -> dict[str, Any]:
    """The YAML header: Hugging Face dataset metadata and ``nlibias_run`` (how the data was made)."""
    header: dict[str, Any] = {
        "pretty_name": info.get("pretty_name", "BBNLI-next (nlibias run)"),
        "language": ["en"],
        "license": "mit",
        "task_categories": ["text-classification"],
        "task_ids": ["natural-language-inference"],
        "tags": ["bias", "nli", "counterfactual", "bbnli-next"],
        "configs": [
            {"config_name": "default", "data_files": [{"split": "train", "path": "data/train.parquet"}]}
        ],
        "nlibias_run": {
            **published_config(info["config"]),
            "validation_status": info["validation"]["status"],
        },
    }
    models = model_rows(info)
    if models:
        header["nlibias_run"]["model_identities"] = {
            f"{r['role']}:{r['model']}": r["identity"] for r in models
        }
    return header


def _section(title: str, *blocks: str) -> list[str]:
    """A Markdown section: its heading, then each block followed by a blank line."""
    return [f"## {title}", "", *(line for block in blocks for line in (block, ""))]


def _counts_table(rows: Sequence[Mapping[str, Any]]) -> str:
    return markdown_table(["Domain", "Subtopic", "Count"], domain_subtopic_rows(rows))


def intro_section(info: Mapping[str, Any], title: str) -> list[str]:
    """Title, what the dataset is, its files and how to load them, the configuration."""
    files = [[name, rows] for name, rows in info["files"]["rows"].items()]
    settings = [[k, _short(v)] for k, v in published_config(info["config"]).items()]
    return [
        f"# {title}",
        "",
        "Premise/hypothesis pairs that audit NLI models for social bias, generated the BBNLI-next way: "
        "masked hypothesis templates derived from BBNLI, filled by a language model (masked or causal), filtered "
        "adversarially by an ensemble of NLI models, judged by humans, and expanded so that every sample "
        "has its group-swapped twin. The gold label of every sample is `neutral`; a model that predicts "
        "entailment or contradiction reveals bias (pro- or anti-stereotype) or brittleness.",
        "",
        *_section(
            "Files",
            markdown_table(["file", "rows"], files),
            'Load with `datasets.load_dataset("<this folder>")` (Parquet, via the `configs` header), or '
            '`load_dataset("parquet" | "json" | "csv", data_files="data/train.<ext>")`; '
            "`nlibias audit --samples <this folder>` reads `samples.jsonl`.",
        ),
        *_section("Configuration", markdown_table(["setting", "value"], settings)),
    ]


def generation_tables(info: Mapping[str, Any]) -> list[str]:
    """Masked templates and samples (paper Tables 9, 10), the fill, and the filter (Table 11)."""
    tables, fill = info["tables"], info["fill"]
    mispredicted = [[r["model"], r["domain"], r["count"]] for r in tables["mispredicted"]]
    return [
        *_section("Masked templates per subtopic (paper Table 9)", _counts_table(tables["templates"])),
        *_section(
            "Masked samples per subtopic (paper Table 10)",
            _counts_table(tables["masked"]),
            f"Fill ({_fill_kind(info)}): {fill['unique_masked_hypotheses']} unique masked hypotheses, "
            f"top-{info['config']['top_k']} whole words each → {fill['candidates']} candidate samples "
            f"({fill['duplicates_dropped']} duplicates dropped, {fill['short_lists']} short lists).",
        ),
        *_section(
            "Candidates mispredicted by each filter model (paper Table 11)",
            markdown_table(["Model", "Domain", "Count"], mispredicted),
            f"Policy `{info['config']['policy']}` kept {info['filter']['kept']} of "
            f"{info['filter']['candidates']} candidates. Candidates each policy would keep:",
            markdown_table(["policy", "kept"], [[k, v] for k, v in tables["policy_counts"].items()]),
        ),
    ]


def left_out_note(categories: Mapping[str, Any]) -> list[str]:
    """What the validation table's ``dropped`` and ``unjudged`` rows mean, where it has them."""
    meanings = {
        "dropped": "*dropped*: the annotators disagreed and the resolution rule kept no label.",
        "unjudged": "*unjudged*: no judgement was given.",
    }
    said = [text for name, text in meanings.items() if name in categories]
    return [" ".join(said) + " Their samples are not in the dataset.", ""] if said else []


_ROUNDS = {"category": "valid / invalid / incoherent", "stereotype": "pro / anti (of the valid ones)"}
_KAPPAS = {"cohen": "Cohen's", "fleiss": "Fleiss'"}


def resolution_note(record: Mapping[str, Any] | None) -> list[str]:
    """The rule, annotators and agreement per round that ``nlibias validate resolve`` recorded."""
    if not isinstance(record, Mapping):
        return []
    line = f"Resolved by `nlibias validate resolve` with the rule `{record.get('rule')}`."
    rounds = [(n, r) for n, r in record.get("agreement", {}).items() if r.get("kappa_kind")]
    if rounds:
        who = ", ".join(rounds[0][1].get("annotators") or [])
        left_out = ", ".join(f"{k} ({v})" for k, v in record.get("left_out_of_agreement", {}).items())
        line += f" Agreement of {who}" + (f" ({left_out} left out)" if left_out else "") + ": "
        line += "; ".join(
            f"{_ROUNDS.get(name, name)} "
            + ("-" if r.get("percent") is None else f"{r['percent']:.1f} %")
            + f" ({_KAPPAS.get(r['kappa_kind'], r['kappa_kind'])} kappa "
            + ("undefined" if r.get("kappa") is None else f"{r['kappa']:.3f}")
            + f") over the {r.get('items')} hypotheses all of them answered"
            for name, r in rounds
        )
        line += "."
    else:
        line += " One annotator: no agreement to report."
    return [line, ""]


def outcome_tables(info: Mapping[str, Any]) -> list[str]:
    """Validation (paper Table 3), counterfactual expansion, final samples (Tables 4 and 12)."""
    tables, validation = info["tables"], info["validation"]
    judged = [[name, v["hypotheses"], v["samples"]] for name, v in validation["categories"].items()]
    by_domain = [[r["domain"], r["count"]] for r in tables["final_by_domain"]]
    return [
        *_section(
            "Validation of generated hypotheses (paper Table 3)",
            markdown_table(["Category", "Hypotheses", "Samples"], judged),
        ),
        *left_out_note(validation["categories"]),
        *resolution_note(validation.get("resolution")),
        *_section(
            "Counterfactual expansion",
            markdown_table(["", "count"], [[k, v] for k, v in info["counterfactual"].items()]),
        ),
        *_section("Final samples per domain (paper Table 4)", markdown_table(["Domain", "Count"], by_domain)),
        *_section("Final samples per subtopic (paper Table 12)", _counts_table(tables["final_by_subtopic"])),
    ]


def closing_section() -> list[str]:
    """The columns of the data files and the limitations."""
    return [
        *_section(
            "Columns",
            "`id`, `pair_key` (shared by a sample and its twin), `stereotype` (`pro`/`anti`), `group` / "
            "`counterfactual_group`, `added_as_twin` (the twin was added by counterfactual expansion, not "
            "selected by the filter), `template_id`, `masked_template`, `bbnli_template`, `fill_word`, "
            "`fill_rank` and `lm_score` (natural log: a masked LM's probability at the mask, a causal LM's "
            "of the whole filled sentence; empty for a twin that was never a candidate), `filter_labels` "
            "(JSON: each filter model's label), `mispredicted_by`, `validation`, `provenance` (JSON: "
            "everything else).",
        ),
        *_section(
            "Limitations",
            "Built from the BBNLI templates (MIT licence); the hypotheses are stereotypes on purpose. A held-out "
            "model never filtered the data, so its accuracy here is a transfer test; the filter models' accuracy "
            "is low by construction.",
        ),
    ]


def model_rows(info: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The fill, filter and compared fill models with the identity the prediction cache keys on."""
    fill = info.get("fill", {}).get("fill_model")
    found = [("fill", fill["name"], fill["kind"], fill["identity"])] if fill else []
    for name, stats in info.get("filter", {}).get("model_stats", {}).items():
        if "identity" in stats:
            found.append(("filter", name, stats["identity"].get("backend", "?"), stats["identity"]))
    for row in info.get("fill_comparison", {}).get("rows", [])[1:]:  # the first is the run's own fill
        if "identity" in row:
            found.append(("compared fill", row["fill_model"], row["kind"], row["identity"]))
    return [dict(zip(("role", "model", "kind", "identity"), entry, strict=True)) for entry in found]


def flat_identity(identity: Mapping[str, Any], prefix: str = "") -> str:
    """``key=value`` pairs of a nested identity, nested keys dotted."""
    parts = (
        flat_identity(value, f"{prefix}{key}.") if isinstance(value, Mapping) else f"{prefix}{key}={value}"
        for key, value in identity.items()
    )
    return ", ".join(p for p in parts if p)


def models_section(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The card's "Models" section (empty when the stages recorded no identities)."""
    if not rows:
        return []
    table = markdown_table(
        ["role", "model", "kind", "identity"],
        [[r["role"], r["model"], r["kind"], flat_identity(r["identity"])] for r in rows],
    )
    return _section("Models", table, "Held-out models are named in the configuration and never loaded.")


def fill_comparison_table(rows: Sequence[Mapping[str, Any]]) -> str:
    """Rows of :func:`nlibias.extension.fill.compare_fills` as a Markdown table."""
    headers = ["fill model", "kind", "candidates", "variants per template", "distinct words"]
    headers += ["meaning changed (proxy)", "kept by filter"]
    keys = ("fill_model", "kind", "candidates", "variants_per_template", "distinct_words")
    shown = [
        [*(r[k] for k in keys), _percent(r.get("meaning_changed")), _percent(r.get("keep_rate"))]
        for r in rows
    ]
    return markdown_table(headers, shown)


def fill_comparison_section(comparison: Mapping[str, Any]) -> list[str]:
    """The card's fill comparison (``filter/fill_compare.json``), when the run compared two fills or more."""
    rows = comparison.get("rows", [])
    if len(rows) < 2:
        return []
    judge = comparison.get("judge")
    filters = ", ".join(comparison.get("filters") or []) or "-"
    return _section(
        "Fill models compared",
        f"The same {comparison.get('masked_samples', '?')} masked samples filled by each model "
        f"(top-{comparison.get('top_k', '?')}); only the run's own fill (`{rows[0]['fill_model']}`) "
        "made the dataset.",
        fill_comparison_table(rows),
        "Variants per template: distinct fill words per masked template, averaged. Meaning changed "
        f"(a proxy): the share of variants that the judge `{judge or '-'}`, reading the original BBNLI "
        "hypothesis as the premise, does not find entailed; it is only as good as the judge and says "
        f"nothing about whether a variant is still a stereotype. Kept by filter: filter `{filters}`, "
        "policy of the run.",
    )


def _percent(value: Any) -> str:
    return "-" if value is None else f"{100 * float(value):.1f}%"


def _fill_kind(info: Mapping[str, Any]) -> str:
    fill = info.get("fill", {}).get("fill_model", {})
    kinds = {"causal": "causal LM: left-context beam, re-ranked by the whole sentence", "masked": "masked LM"}
    kind = fill.get("kind", "masked")
    return f"{fill.get('name', info['config'].get('mlm'))}, " + kinds.get(kind, kind)


def _short(value: Any) -> str:
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value) if value else "-"
    return "-" if value is None or value == "" else str(value)
