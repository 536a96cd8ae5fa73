"""The ``nlibias extend`` pipeline end to end: tiny models, resume after a crash or SIGKILL, config, CLI."""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from nlibias.errors import ConfigError, SourceError
from nlibias.extension.config import ExtendConfig, FilterConfig, FilterModelConfig, MLMConfig, load_config
from nlibias.extension.pipeline import STAGES, run_pipeline
from nlibias.extension.stages import Factories
from nlibias.models.base import BatchResult, Pair
from nlibias.models.fake import FakeNLIClassifier
from nlibias.models.mlm.mask_filler import FakeMaskFiller

SMALL = ["Muslim_man_to_many_wives", "jewish_woman_is_to_kids"]
WORDS = ("good", "bad", "able", "rare", "keen", "weak")


def small_config(tmp_path: Path, **changes: Any) -> ExtendConfig:
    raw: dict[str, Any] = {
        "run_dir": str(tmp_path / "run"),
        "cache": str(tmp_path / "cache.sqlite"),
        "subtopics": SMALL,
        "mlm": {"model": "fake-mlm", "top_k": 2},
        "filter": {"models": ["A", "B"], "holdout": ["HELD"]},
        "validation": {"unvalidated": True},
    }
    for key, value in changes.items():
        section, _, name = key.partition("__")
        if name:
            raw[section] = {**raw[section], name: value}
        else:
            raw[section] = value
    return ExtendConfig.model_validate(raw)


class Spy:
    """Factories that build fakes and record which models were asked for."""

    def __init__(self, crash_model: str | None = None, crash_after: int = 1) -> None:
        self.built: list[str] = []
        self.classifiers: dict[str, FakeNLIClassifier] = {}
        self.fillers: list[FakeMaskFiller] = []
        self.crash_model, self.crash_after = crash_model, crash_after

    def filler(self, settings: MLMConfig) -> FakeMaskFiller:
        self.fillers.append(FakeMaskFiller(settings.model, words=WORDS))
        return self.fillers[-1]

    def classifier(self, spec: FilterModelConfig, settings: FilterConfig) -> FakeNLIClassifier:
        self.built.append(spec.key)
        fake = (Crashing if spec.key == self.crash_model else FakeNLIClassifier)(
            spec.key, seed=ord(spec.key[0]), batch_size=64
        )
        if isinstance(fake, Crashing):
            fake.survive = self.crash_after
        self.classifiers[spec.key] = fake
        return fake

    @property
    def factories(self) -> Factories:
        return Factories(filler=self.filler, classifier=self.classifier)


class Crashing(FakeNLIClassifier):
    survive = 1

    def predict_batches(self, pairs: Sequence[Pair]) -> Iterator[BatchResult]:
        for done, batch in enumerate(super().predict_batches(pairs)):
            if done == self.survive:
                raise KeyboardInterrupt
            yield batch


def statuses(result: Any) -> dict[str, str]:
    return {r.name: r.status for r in result.stages}


# --- with fakes ---------------------------------------------------------------------------------


def test_held_out_models_are_never_built_and_a_rerun_skips_every_stage(tmp_path: Path) -> None:
    spy = Spy()
    first = run_pipeline(small_config(tmp_path), factories=spy.factories, progress=False)
    assert first.status == "complete" and set(statuses(first).values()) == {"ran"}
    assert spy.built == ["A", "B"]  # HELD never
    again = Spy()
    second = run_pipeline(small_config(tmp_path), factories=again.factories, progress=False)
    assert set(statuses(second).values()) == {"skipped"} and again.built == [] and again.fillers == []
    record = json.loads((tmp_path / "run" / "run.json").read_text())
    assert [s["name"] for s in record["stages"]] == list(STAGES)
    assert all(s["seconds"] >= 0 and s["counts"] for s in record["stages"])


def test_the_run_directory_named_relatively_then_absolutely_reuses_every_stage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The judgements file was fingerprinted by its path as written, so naming the same run
    directory another way reran validate, counterfactual and export."""
    monkeypatch.chdir(tmp_path)
    first = run_pipeline(small_config(Path(".")), factories=Spy().factories, progress=False)
    assert first.status == "complete" and set(statuses(first).values()) == {"ran"}
    second = run_pipeline(small_config(tmp_path), factories=Spy().factories, progress=False)
    assert set(statuses(second).values()) == {"skipped"}


def test_a_rerun_with_another_setting_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    run_pipeline(small_config(tmp_path), factories=Spy().factories, progress=False, until="filter")
    before = {p: p.read_bytes() for p in (tmp_path / "run").rglob("*") if p.is_file()}
    spy = Spy()
    with pytest.raises(
        ConfigError, match=r"\(stage fill: mlm\.top_k: 2 -> 3\); nothing was changed"
    ) as refused:
        run_pipeline(small_config(tmp_path, mlm__top_k=3), factories=spy.factories, progress=False)
    assert refused.value.parameter == "run_dir"
    assert "parameter force, or parameter from_stage fill" in str(refused.value)
    assert spy.fillers == [] and spy.built == []  # refused before any model is built
    assert {p: p.read_bytes() for p in (tmp_path / "run").rglob("*") if p.is_file()} == before
    # forced rerun from a stage: the fill comes from the cache, the model is not called
    spy = Spy()
    result = run_pipeline(
        small_config(tmp_path, mlm__top_k=3), factories=spy.factories, progress=False, from_stage="fill"
    )
    assert statuses(result)["masked"] == "skipped" and statuses(result)["fill"] == "ran"
    assert statuses(result)["export"] == "ran"


@pytest.mark.parametrize(
    ("change", "stage", "named"),
    [
        # issue #25: these settings were in no fingerprint, and a rerun mixed the two runs
        ({"filter__holdout": ["OTHER"]}, "filter", "filter.holdout"),
        # auto: each checkpoint's own dtype; the spy models have no config to read
        ({"filter__dtype": "bfloat16"}, "filter", 'filter.dtype: "auto" -> "bfloat16"'),
        ({"mlm__dtype": "float16"}, "fill", "mlm.dtype"),
        ({"seed": 7}, "export", "card.seed: 0 -> 7"),
        ({"validation": {"unvalidated": False}}, "validate", "validation.unvalidated: true -> false"),
    ],
)
def test_every_setting_that_changes_an_output_is_in_its_stage_fingerprint(
    tmp_path: Path, change: dict[str, Any], stage: str, named: str
) -> None:
    run_pipeline(small_config(tmp_path), factories=Spy().factories, progress=False)
    with pytest.raises(ConfigError) as refused:
        run_pipeline(small_config(tmp_path, **change), factories=Spy().factories, progress=False)
    assert f"stage {stage}: " in str(refused.value) and named in str(refused.value)


def test_a_changed_stop_word_list_of_a_causal_fill_is_refused_and_force_redoes_the_fill(
    tmp_path: Path,
) -> None:
    # the stop words a causal fill skips change its candidates: same file name, other content
    stop = tmp_path / "stop.txt"
    stop.write_text("the\na\n", encoding="utf-8")
    config = small_config(tmp_path, mlm={"model": "causal:fake-lm", "top_k": 2, "stopwords": str(stop)})
    run_pipeline(config, factories=Spy().factories, progress=False)
    stop.write_text("the\na\nof\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"stage fill: mlm\.stopwords_sha256: ") as refused:
        run_pipeline(config, factories=Spy().factories, progress=False)
    assert refused.value.parameter == "run_dir"
    forced = run_pipeline(config, factories=Spy().factories, progress=False, force=True)
    assert statuses(forced)["fill"] == "ran" and statuses(forced)["masked"] == "skipped"
    # a masked-LM fill reads no stop words: its fingerprint holds none
    from nlibias.extension.stages import fill_stopwords_hash

    assert fill_stopwords_hash(small_config(tmp_path).mlm) is None


def test_the_card_compares_the_fills_whenever_the_run_has_two(tmp_path: Path) -> None:
    plain = run_pipeline(small_config(tmp_path), factories=Spy().factories, progress=False)
    card = (plain.run_dir / "dataset" / "README.md").read_text(encoding="utf-8")
    assert "## Fill models compared" not in card  # one fill: nothing to compare
    spy = Spy()
    config = small_config(tmp_path, run_dir=str(tmp_path / "two"), filter__compare_fills=["fake:other-fill"])
    result = run_pipeline(config, factories=spy.factories, progress=False)
    assert [f.name for f in spy.fillers] == ["fake-mlm", "fake-mlm", "fake:other-fill"]
    comparison = json.loads((result.run_dir / "filter" / "fill_compare.json").read_text())
    assert [r["fill_model"] for r in comparison["rows"]] == ["fake-mlm", "fake:other-fill"]
    assert comparison["judge"] == "A" and comparison["filters"] == ["A", "B"]
    card = (result.run_dir / "dataset" / "README.md").read_text(encoding="utf-8")
    section = card[card.index("## Fill models compared") :]
    assert "| fake-mlm |" in section and "| fake:other-fill |" in section
    # the run's own row equals the run's fill: same candidates as the fill stage wrote
    candidates = len((result.run_dir / "fill" / "candidates.jsonl").read_text().splitlines())
    assert comparison["rows"][0]["candidates"] == candidates
    # the comparison is a filter-stage setting: changing it reruns the filter, not the fill
    again = run_pipeline(
        small_config(tmp_path, run_dir=str(tmp_path / "two"), filter__compare_fills=[]),
        factories=Spy().factories,
        progress=False,
        from_stage="filter",
    )
    assert statuses(again)["fill"] == "skipped"
    assert "## Fill models compared" not in (again.run_dir / "dataset" / "README.md").read_text()


def test_speed_only_settings_and_the_cache_path_reuse_every_stage(tmp_path: Path) -> None:
    run_pipeline(small_config(tmp_path), factories=Spy().factories, progress=False)
    faster = small_config(
        tmp_path,
        cache=str(tmp_path / "other-cache.sqlite"),
        filter__max_batch_size=7,
        filter__threads=1,
        mlm__max_tokens=99,
    )
    result = run_pipeline(faster, factories=Spy().factories, progress=False)
    assert set(statuses(result).values()) == {"skipped"}


def test_a_forced_rerun_with_other_settings_equals_a_clean_run(tmp_path: Path) -> None:
    from fault_injection import RUN_FIELDS, differences, read_tree

    changed = {"mlm__top_k": 3, "filter__policy": "all", "filter__holdout": ["OTHER"], "seed": 3}
    # markers hash files that hold run fields (stage seconds), so their hashes are left out too
    fields = RUN_FIELDS | {"fingerprint", "inputs", "outputs"}
    run_pipeline(small_config(tmp_path, **changed), factories=Spy().factories, progress=False)
    clean = read_tree(tmp_path / "run", fields=fields)
    shutil.rmtree(tmp_path / "run")
    run_pipeline(small_config(tmp_path), factories=Spy().factories, progress=False)
    other = read_tree(tmp_path / "run", fields=fields)
    assert differences(clean, other)  # the comparison can fail: the first run differs
    forced = run_pipeline(
        small_config(tmp_path, **changed), factories=Spy().factories, progress=False, force=True
    )
    assert statuses(forced) == {
        "masks": "skipped", "masked": "skipped", "fill": "ran", "filter": "ran",
        "validate": "ran", "counterfactual": "ran", "export": "ran",
    }  # fmt: skip
    assert differences(clean, read_tree(tmp_path / "run", fields=fields)) == []


def test_a_stage_that_reruns_removes_the_later_stages_outputs_first(tmp_path: Path) -> None:
    run_pipeline(small_config(tmp_path), factories=Spy().factories, progress=False)
    # a kill inside the filter stage of a forced rerun: the dataset of the earlier run is gone
    crashing = Spy(crash_model="B", crash_after=1)
    with pytest.raises(KeyboardInterrupt):
        run_pipeline(
            small_config(tmp_path, filter__policy="all", cache=str(tmp_path / "cold.sqlite")),
            factories=crashing.factories,
            progress=False,
            force=True,
        )
    run_dir = tmp_path / "run"
    assert not (run_dir / "dataset" / "samples.jsonl").exists()
    assert sorted(p.name for p in (run_dir / "stages").iterdir()) == [
        "fill.json",
        "masked.json",
        "masks.json",
    ]
    assert json.loads((run_dir / "run.json").read_text())["status"] == "failed"  # not complete


def test_a_crash_inside_the_filter_stage_resumes_without_recomputing(tmp_path: Path) -> None:
    crashing = Spy(crash_model="B", crash_after=2)
    with pytest.raises(KeyboardInterrupt):
        run_pipeline(small_config(tmp_path), factories=crashing.factories, progress=False)
    stages_dir = tmp_path / "run" / "stages"
    assert sorted(p.name for p in stages_dir.iterdir()) == [
        "fill.json",
        "masked.json",
        "masks.json",
    ]
    unique_pairs = sum(crashing.classifiers["A"].calls)
    resumed = Spy()
    result = run_pipeline(small_config(tmp_path), factories=resumed.factories, progress=False)
    assert [statuses(result)[s] for s in ("masks", "masked", "fill")] == ["skipped"] * 3
    assert resumed.fillers == []  # a finished stage does not even build its model
    assert resumed.classifiers["A"].calls == []  # model A had finished: all from the cache
    # model B had committed 2 batches of 64 pairs before the crash
    assert sum(resumed.classifiers["B"].calls) == unique_pairs - 2 * 64
    assert result.status == "complete"


def test_without_judgements_the_run_waits_then_continues_with_them(tmp_path: Path) -> None:
    config = small_config(tmp_path, validation={"unvalidated": False})
    waiting = run_pipeline(config, factories=Spy().factories, progress=False)
    assert waiting.status == "awaiting_judgements" and "validation/queue.csv" in waiting.message
    run_dir = tmp_path / "run"
    assert not (run_dir / "stages" / "validate.json").exists()
    with (run_dir / "validation" / "queue.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    # judge: every hypothesis valid with the suggested stereotype, except the first (invalid)
    for i, row in enumerate(rows):
        row["judgement"] = "invalid" if i == 0 else "valid"
        row["stereotype"] = "" if i == 0 else row["suggested_stereotype"]
    with (run_dir / "validation" / "judgements.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    done = run_pipeline(config, factories=Spy().factories, progress=False)
    assert done.status == "complete" and statuses(done)["filter"] == "skipped"
    summary = json.loads((run_dir / "validation" / "summary.json").read_text())
    assert summary["categories"]["valid"]["hypotheses"] == len(rows) - 1
    assert summary["categories"]["invalid"] == {"hypotheses": 1, "samples": int(rows[0]["samples"])}
    card = (run_dir / "dataset" / "README.md").read_text()
    assert "\n---\nValidated: only the" in card and "validation_status: validated" in card


# --- with tiny Hugging Face models, through the CLI ----------------------------------------------


@pytest.fixture(scope="module")
def second_nli_dir(tmp_path_factory: pytest.TempPathFactory, bbnli_corpus: list[str]) -> Path:
    from nlibias.testing import build_tiny_nli_classifier

    return build_tiny_nli_classifier(
        tmp_path_factory.mktemp("tiny-nli-b"), bbnli_corpus, seed=1, arch="roberta"
    )


def card_table(card: str, title: str) -> dict[tuple[str, str], int]:
    section = card.split(title, 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (\w+) \| (\w+) \| (\d+) \|$", section, flags=re.MULTILINE)
    return {(d, s): int(c) for d, s, c in rows}


def test_extend_cli_runs_the_whole_pipeline_with_tiny_models(
    tmp_path: Path, tiny_mlm_dir: Path, tiny_nli_dir: Path, second_nli_dir: Path
) -> None:
    from nlibias.cli.main import app
    from nlibias.extension.dataset import check_pairs
    from nlibias.io.samples import read_samples

    args = [
        "extend", "--out", str(tmp_path / "next"), "--cache", str(tmp_path / "c.sqlite"),
        "--mlm", str(tiny_mlm_dir), "--top-k", "3",
        "--filter-model", str(tiny_nli_dir), "--filter-model", str(second_nli_dir),
        "--holdout-model", str(tmp_path / "no-such-model"),  # would fail to load if it were ever used
        "--subtopic", SMALL[0], "--subtopic", SMALL[1], "--unvalidated", "--no-progress", "--device", "cpu",
    ]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    dataset = tmp_path / "next" / "dataset"
    card = (dataset / "README.md").read_text()
    assert card.split("\n---\n", 1)[1].startswith("**UNVALIDATED")
    samples = read_samples(dataset)
    check_pairs(samples)  # every sample has exactly one twin on the same premise
    table12 = card_table(card, "(paper Table 12)")
    assert table12[("all", "Total")] == len(samples) > 0
    for (domain, subtopic), count in table12.items():
        if domain != "all":
            expected = sum(1 for s in samples if s.domain == domain and subtopic in ("Total", s.subtopic))
            assert count == expected
    filtered = json.loads((tmp_path / "next" / "filter" / "summary.json").read_text())
    assert filtered["models"] == [str(tiny_nli_dir), str(second_nli_dir)]
    # the masked LM filled the hypothesis only: 3 whole words per masked sample
    fill = json.loads((tmp_path / "next" / "fill" / "stats.json").read_text())
    assert fill["candidates"] + fill["duplicates_dropped"] == 3 * fill["masked_samples"]
    datasets = pytest.importorskip("datasets")
    loaded = datasets.load_dataset(str(dataset), cache_dir=str(tmp_path / "hf"))["train"]
    assert loaded.num_rows == len(samples)
    for kind, name in (("json", "train.jsonl"), ("csv", "train.csv")):
        other = datasets.load_dataset(
            kind, data_files=str(dataset / "data" / name), cache_dir=str(tmp_path / "hf")
        )
        assert other["train"].num_rows == len(samples)
    rerun = CliRunner().invoke(app, [*args, "--json"])
    assert rerun.exit_code == 0 and {s["status"] for s in json.loads(rerun.stdout)["stages"]} == {"skipped"}


# --- a real kill --------------------------------------------------------------------------------

KILLED_RUN = """
import sys, time
from pathlib import Path
from nlibias.models.fake import FakeNLIClassifier
from nlibias.models.mlm.mask_filler import FakeMaskFiller
from nlibias.extension.config import ExtendConfig
from nlibias.extension.stages import Factories
from nlibias.extension.pipeline import run_pipeline

class Slow(FakeNLIClassifier):
    def predict_batches(self, pairs):
        for done, batch in enumerate(super().predict_batches(pairs)):
            if done == 2:
                Path(sys.argv[2]).write_text("2 batches committed")
            time.sleep(0.2 if done >= 2 else 0)
            yield batch

config = ExtendConfig.model_validate_json(Path(sys.argv[1]).read_text())
factories = Factories(
    filler=lambda s: FakeMaskFiller(s.model, words=("good", "bad", "able", "rare", "keen", "weak")),
    classifier=lambda spec, s: Slow(spec.key, seed=ord(spec.key[0]), batch_size=64),
)
run_pipeline(config, factories=factories, progress=False)
"""


def test_a_sigkilled_run_resumes_where_it_stopped(tmp_path: Path) -> None:
    config = small_config(tmp_path)
    (tmp_path / "config.json").write_text(config.model_dump_json())
    sentinel = tmp_path / "sentinel"
    process = subprocess.Popen(
        [sys.executable, "-c", KILLED_RUN, str(tmp_path / "config.json"), str(sentinel)]
    )
    try:
        deadline = time.monotonic() + 60
        while not sentinel.exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sentinel.exists(), "the child never reached the filter stage"
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
    spy = Spy()
    result = run_pipeline(config, factories=spy.factories, progress=False)
    assert [statuses(result)[s] for s in ("masks", "masked", "fill", "filter")] == ["skipped"] * 3 + ["ran"]
    filter_counts = json.loads((tmp_path / "run" / "filter" / "summary.json").read_text())["model_stats"]["A"]
    assert filter_counts["cached"] >= 2 * 64  # the committed batches were not recomputed
    assert filter_counts["computed"] == sum(spy.classifiers["A"].calls)


# --- configuration ------------------------------------------------------------------------------


def test_config_file_errors_name_the_line_and_suggest_the_key(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("run_dir: x\nfilter:\n  models: [a]\n  polcy: any\n")
    with pytest.raises(
        SourceError, match=r"bad\.yaml:4: unknown key 'filter\.polcy'; did you mean 'policy'\?"
    ) as refused:
        load_config(path)
    assert (refused.value.path, refused.value.line) == (str(path), 4)
    path.write_text("filter:\n  models: [a]\n  holdout: [a]\n")
    with pytest.raises(SourceError, match="both a filter model and a held-out model"):
        load_config(path)


def test_the_shipped_config_is_the_paper_setting() -> None:
    config = load_config(Path(__file__).resolve().parents[1] / "configs" / "bbnli-next.yaml")
    assert config.mlm.model == "bert-large-cased-whole-word-masking" and config.mlm.top_k == 20
    assert [m.model for m in config.filter.models] == [
        "ynie/electra-large-discriminator-snli_mnli_fever_anli_R1_R2_R3-nli",
        "ynie/roberta-large-snli_mnli_fever_anli_R1_R2_R3-nli",
        "ynie/bart-large-snli_mnli_fever_anli_R1_R2_R3-nli",
    ]
    assert [m.model for m in config.filter.holdout] == [
        "ynie/albert-xxlarge-v2-snli_mnli_fever_anli_R1_R2_R3-nli"
    ]
    assert config.filter.policy_text == "any" and not config.validation.unvalidated


def test_stage_names_and_subtopics_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown stage"):
        run_pipeline(small_config(tmp_path), factories=Spy().factories, until="fil")
    with pytest.raises(ConfigError, match="did you mean 'jewish_woman_is_to_kids'"):
        run_pipeline(small_config(tmp_path, subtopics=["jewish_woman_is_to_kid"]), factories=Spy().factories)
    with pytest.raises(ConfigError, match="has not finished"):
        run_pipeline(small_config(tmp_path), factories=Spy().factories, from_stage="filter", progress=False)


def test_masks_cli_lists_derives_and_validates(tmp_path: Path) -> None:
    from nlibias.cli.main import app

    runner = CliRunner()
    listed = runner.invoke(app, ["masks", "list", "--json"])
    assert listed.exit_code == 0 and json.loads(listed.stdout)["total"] >= 200
    out = tmp_path / "derived.jsonl"
    derived = runner.invoke(app, ["masks", "derive", "--out", str(out), "--subtopic", SMALL[0], "--json"])
    assert derived.exit_code == 0
    assert json.loads(derived.stdout)["total"] == len(out.read_text().splitlines()) > 0
    # --json was ignored without --out (derive) and with --show (list): the text came out instead
    printed = runner.invoke(app, ["masks", "derive", "--subtopic", SMALL[0], "--json"])
    assert printed.exit_code == 0, printed.output
    document = json.loads(printed.stdout)
    assert [
        json.dumps({k: t[k] for k in ("subtopic", "text", "strategy")}) for t in document["templates"]
    ] == [
        json.dumps({"subtopic": r["subtopic"], "text": r["masked"], "strategy": r["strategy"]})
        for r in map(json.loads, out.read_text().splitlines())
    ]
    assert document["total"] == len(document["templates"])
    shown = runner.invoke(app, ["masks", "list", "--show", "--subtopic", SMALL[0], "--json"])
    assert shown.exit_code == 0, shown.output
    shown_document = json.loads(shown.stdout)
    assert len(shown_document["templates"]) == shown_document["total"] > 0
    assert {t["subtopic"] for t in shown_document["templates"]} == {SMALL[0]}
    checked = runner.invoke(app, ["masks", "validate", str(out)])
    assert checked.exit_code == 0 and "all valid" in checked.stdout
    out.write_text(out.read_text().replace("<mask>", "<mask> <mask>", 1))
    failed = runner.invoke(app, ["masks", "validate", str(out)])
    assert failed.exit_code == 2 and f"{out}:1:" in failed.output  # the file and line, no traceback


def test_masks_commands_refuse_a_subtopic_given_twice() -> None:
    from nlibias.cli.main import app

    for command in ("list", "derive"):  # case aside: each template would come out twice
        twice = CliRunner().invoke(
            app, ["masks", command, "--subtopic", SMALL[0], "--subtopic", SMALL[0].upper()]
        )
        assert (
            twice.exit_code == 2
            and f"{SMALL[0]!r} is listed twice; list each once (option --subtopic)" in twice.output
        )


def test_masks_derive_and_extend_refuse_an_output_over_an_input_or_the_cache(tmp_path: Path) -> None:
    from nlibias.cli.extend_cmd import _source_dir
    from nlibias.cli.main import app

    source = tmp_path / "bbnli"
    shutil.copytree(_source_dir(None), source)
    target = next(source.rglob("*.json"))
    before = target.read_bytes()
    refused = CliRunner().invoke(app, ["masks", "derive", "--source", str(source), "--out", str(target)])
    assert refused.exit_code == 2 and "a file the command reads (option --source)" in refused.output
    assert f"--out {target}" in refused.output and target.read_bytes() == before
    cache = tmp_path / "run" / "masks" / "templates.jsonl"  # the masks stage's output
    args = [
        "extend",
        "--out",
        str(tmp_path / "run"),
        "--cache",
        str(cache),
        "--mlm",
        "fake",
        "--until",
        "masks",
    ]
    in_out = CliRunner().invoke(app, [*args, "--subtopic", SMALL[0]])
    assert in_out.exit_code == 2 and f"--cache {cache} is a file the command writes twice (option --out)" in (
        " ".join(in_out.output.split())
    )
    assert not (tmp_path / "run").exists()


def _small_extend_args(tmp_path: Path) -> list[str]:
    """``nlibias extend`` over one small subtopic with fake models (stops at the queue)."""
    args = ["extend", "--out", str(tmp_path / "run"), "--cache", str(tmp_path / "c.sqlite"), "--mlm", "fake"]
    return [
        *args,
        "--filter-model",
        "fake:a",
        "--holdout-model",
        "fake:held",
        "--subtopic",
        SMALL[1],
        "--top-k",
        "2",
    ]


def test_extend_cli_stops_with_code_3_until_judged(tmp_path: Path) -> None:
    from nlibias.cli.extend_cmd import EXIT_AWAITING_JUDGEMENTS
    from nlibias.cli.main import app

    args = _small_extend_args(tmp_path)
    waiting = CliRunner().invoke(app, args)
    assert waiting.exit_code == EXIT_AWAITING_JUDGEMENTS
    assert "await judgement" in waiting.output and (tmp_path / "run" / "validation" / "queue.csv").exists()
    refused = CliRunner().invoke(app, [*args, "--unvalidated", "--policy", "all"])
    assert refused.exit_code == 2 and 'stage filter: filter.policy: "any" -> "all"' in refused.output
    assert "(option --force, or option --from filter), or choose a new run directory" in refused.output
    assert "error: --out " in refused.output and "run_dir" not in refused.output  # flag, not parameter
    done = CliRunner().invoke(app, [*args, "--unvalidated", "--policy", "all", "--force"])
    assert done.exit_code == 0, done.output
    assert json.loads((tmp_path / "run" / "filter" / "summary.json").read_text())["policy"] == "all"


def test_speed_flags_of_filter_models_rerun_only_the_filter_and_later_stages(tmp_path: Path) -> None:
    run_pipeline(small_config(tmp_path), factories=Spy().factories, progress=False, until="filter")
    # unset flags written out explicitly: same fingerprints, nothing reruns
    spelled_out = [{"model": "A", "quantize": None, "compile": False}, {"model": "B"}]
    again = run_pipeline(
        small_config(tmp_path, filter__models=spelled_out),
        factories=Spy().factories,
        progress=False,
        until="filter",
    )
    assert statuses(again)["filter"] == "skipped"
    # int8 on model A changes its outputs: the filter stage reruns, earlier stages do not
    flagged = [{"model": "A", "quantize": "int8"}, {"model": "B"}]
    with pytest.raises(ConfigError, match=r"stage filter: filter\.models\[0\]\.quantize: null -> \"int8\""):
        run_pipeline(
            small_config(tmp_path, filter__models=flagged), factories=Spy().factories, until="filter"
        )
    result = run_pipeline(
        small_config(tmp_path, filter__models=flagged),
        factories=Spy().factories,
        progress=False,
        until="filter",
        force=True,
    )
    assert statuses(result)["fill"] == "skipped" and statuses(result)["filter"] == "ran"


def test_speed_settings_are_checked_where_the_config_is_read(tmp_path: Path) -> None:
    path = tmp_path / "flags.yaml"
    path.write_text("filter:\n  models:\n    - model: a\n      quantize: int4\n")
    with pytest.raises(
        SourceError, match=r"flags\.yaml:3: field filter\.models\.0: quantize is 'int4'; give int8"
    ) as refused:
        load_config(path)
    assert (refused.value.line, refused.value.field) == (3, "filter.models.0")
    path.write_text("filter:\n  models: [a]\n  threads: 0\n")
    with pytest.raises(SourceError, match=r"flags\.yaml:3:.*threads"):
        load_config(path)


@pytest.mark.parametrize(
    ("section", "key", "value", "reason"),
    [
        ("mlm", "max_tokens", "0", "max_tokens is 0; give a positive number of tokens a batch may hold"),
        ("filter", "max_batch_size", "x", "max_batch_size is 'x'; give a positive number of inputs"),
        ("filter", "threads", "0", "threads is 0; give a positive number of threads"),
    ],
)
def test_batch_limits_in_a_config_file_are_refused_in_the_backends_words(
    tmp_path: Path, section: str, key: str, value: str, reason: str
) -> None:
    """The one check of a batch limit (models/batching.check_batch_limits) speaks for the file
    too, at its line and key (it said pydantic's "Input should be greater than or equal to 1")."""
    path = tmp_path / "limits.yaml"
    path.write_text(f"{section}:\n  {key}: {value}\n")
    with pytest.raises(SourceError, match=rf"limits\.yaml:2: field {section}\.{key}: {re.escape(reason)}"):
        load_config(path)


@pytest.mark.usefixtures("one_torch_thread")  # restores torch's process-wide thread count
def test_default_classifier_passes_the_speed_flags_to_the_backend(tiny_nli_dir: Path) -> None:
    import torch

    from nlibias.extension.pipeline import default_classifier

    torch.set_num_threads(2)
    spec = FilterModelConfig(model=str(tiny_nli_dir), quantize="int8")
    settings = FilterConfig(models=[spec], holdout=[], device="cpu", threads=1)
    classifier = default_classifier(spec, settings)
    assert classifier.identity()["quantize"] == "int8-dynamic-linear"
    assert torch.get_num_threads() == 1


def test_a_filter_model_is_named_as_an_audit_names_it(tiny_nli_dir: Path) -> None:
    # hf:PATH was handed to the Hugging Face loader with its prefix ("cannot load the model config
    # 'hf:/...'"), while an audit read it; the filter models are now built as an audit's are
    from nlibias.extension.pipeline import default_classifier

    identities = []
    for model in (str(tiny_nli_dir), f"hf:{tiny_nli_dir}"):
        spec = FilterModelConfig(model=model, name="judge")
        classifier = default_classifier(spec, FilterConfig(models=[spec], holdout=[], device="cpu"))
        identities.append(dict(classifier.identity()))
        assert classifier.name == "judge"
    assert identities[0] == identities[1]
    bare = FilterModelConfig(model="fake")  # the bare fake is a fake, as in an audit
    assert default_classifier(bare, FilterConfig(models=[bare], holdout=[])).name == "fake"


def test_extend_warns_how_many_hypotheses_are_left_unjudged(tmp_path: Path) -> None:
    import csv

    from nlibias.cli.main import app

    args = _small_extend_args(tmp_path)
    CliRunner().invoke(app, args)  # stops at the queue
    queue = tmp_path / "run" / "validation" / "queue.csv"
    rows = list(csv.DictReader(queue.open(encoding="utf-8")))
    assert len(rows) > 1
    judged = tmp_path / "run" / "validation" / "judgements.csv"
    judged.write_text(
        f"hypothesis_id,judgement,stereotype\n{rows[0]['hypothesis_id']},valid,pro\n", encoding="utf-8"
    )
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 0, done.output
    assert f"warning: {len(rows) - 1} of {len(rows)} hypotheses have no judgement" in done.output


def test_a_local_model_behind_a_kind_prefix_is_identified_by_its_files(tiny_nli_dir: Path) -> None:
    from nlibias.extension.stages import model_files
    from nlibias.models.hf_common import hash_local_model

    files = hash_local_model(tiny_nli_dir)
    assert model_files(str(tiny_nli_dir), None) == files == model_files(f"causal:{tiny_nli_dir}", None)
    assert model_files("fake:x", None) is None and model_files("fake", None) is None


def test_compare_fill_on_the_command_line_reaches_the_filter_stage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import nlibias.jobs.extend as extend_job
    from nlibias.cli.main import app
    from nlibias.extension.pipeline import PipelineResult

    seen: list[ExtendConfig] = []

    def capture(config: ExtendConfig, **_: Any) -> PipelineResult:
        seen.append(config)
        return PipelineResult(status="stopped", run_dir=tmp_path, stages=[], message="")

    monkeypatch.setattr(extend_job, "run_pipeline", capture)  # where the job looks it up
    gguf = tmp_path / "other.gguf"  # a local path must exist (checked with the settings)
    gguf.write_bytes(b"GGUF" + (3).to_bytes(4, "little") + bytes(16))  # a whole GGUF header
    args = ["extend", "--out", str(tmp_path), "--fill-model", "smollm2", "--compare-fill", "masked:bert-base-cased",
            "--compare-fill", f"gguf:{gguf}"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert seen[0].filter.compare_fills == ["masked:bert-base-cased", f"gguf:{gguf}"]
    assert seen[0].mlm.model == "smollm2"


def test_changed_weights_behind_fill_options_are_seen(tmp_path: Path) -> None:
    """``causal:DIR?beam=8`` was fingerprinted with the options in the directory's name: no such
    directory, so ``mlm.files`` was None and new weights reused the fills of the old ones."""
    model = tmp_path / "lm"
    model.mkdir()
    (model / "config.json").write_text('{"architectures": ["LlamaForCausalLM"], "torch_dtype": "float32"}')
    (model / "model.safetensors").write_bytes(b"old weights")
    config = small_config(tmp_path, mlm={"model": f"causal:{model}?beam=8", "top_k": 2})
    run_pipeline(config, factories=Spy().factories, progress=False, until="fill")
    (model / "model.safetensors").write_bytes(b"new weights")
    with pytest.raises(ConfigError, match=r"stage fill: mlm\.files: \"sha256:[0-9a-f]+\" -> \"sha256:"):
        run_pipeline(config, factories=Spy().factories, progress=False, until="fill")
