"""``export model-index --card`` updates a card as a careful editor would: its mode and its
symlink kept (a read-only card refused), two exports at once both kept (a file lock), a damaged
metadata block refused with its line (never an internal error or a second block), nothing of
huggingface_hub's on stderr, values rounded to what their intervals support, the model named by
``--name`` or the card, and ``--json``."""

from __future__ import annotations

import json
import multiprocessing
import shutil
import stat
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from nlibias.cli.main import app

runner = CliRunner()


def _audit(samples: Path, out: Path) -> Path:
    done = runner.invoke(app, ["audit", "--samples", str(samples), "--model", "fake:m", "--out", str(out),
                               "--bootstrap", "50", "--no-cache", "--quiet"])  # fmt: skip
    assert done.exit_code == 0, done.output
    return out


@pytest.fixture(scope="module")
def runs(
    tmp_path_factory: pytest.TempPathFactory, bbnli_samples_run: Path, data_dir: Path
) -> dict[str, Path]:
    """A fake model's audits of BBNLI and of every 50th row of WQ-NLI: two benchmarks, one card."""
    root = tmp_path_factory.mktemp("cards")
    rows = (data_dir / "wq-nli" / "winoqueer_nli.csv").read_text(encoding="utf-8").splitlines()
    (root / "wq.csv").write_text("\n".join([rows[0], *rows[50:20000:50]]) + "\n", encoding="utf-8")
    expanded = runner.invoke(
        app, ["expand", "wq-nli", "--source", str(root / "wq.csv"), "--out", str(root / "wq")]
    )
    assert expanded.exit_code == 0, expanded.output
    return {
        "bbnli": _audit(bbnli_samples_run / "samples.jsonl", root / "bbnli"),
        "wq-nli": _audit(root / "wq" / "samples.jsonl", root / "wqrun"),
    }


def _export(run: Path, card: Path, *options: str) -> tuple[int, str]:
    done = runner.invoke(app, ["export", "model-index", str(run), "--card", str(card), *options])
    return done.exit_code, done.output


def _datasets(card: Path) -> set[str]:
    from huggingface_hub import ModelCard

    return {r.dataset_type for r in ModelCard.load(card).data.eval_results}


def test_a_read_only_card_is_refused_and_a_card_keeps_its_mode(runs: dict[str, Path], tmp_path: Path) -> None:
    card = tmp_path / "README.md"
    card.write_text("# m\n")
    card.chmod(0o444)  # refused also for root, who could write it: the mode says "leave it"
    code, output = _export(runs["bbnli"], card)
    assert code == 2 and "read-only (mode 0444)" in output and "Traceback" not in output
    assert card.read_text() == "# m\n" and stat.S_IMODE(card.stat().st_mode) == 0o444
    card.chmod(0o640)
    assert _export(runs["bbnli"], card)[0] == 0
    assert stat.S_IMODE(card.stat().st_mode) == 0o640  # was the umask's 0644 after the rename
    assert _datasets(card) == {"nlibias/bbnli"}


def test_a_symlinked_card_stays_a_link_and_its_file_is_updated(runs: dict[str, Path], tmp_path: Path) -> None:
    (tmp_path / "cards").mkdir()
    target = tmp_path / "cards" / "model.md"
    target.write_text("---\nlicense: mit\n---\n# m\n")
    link = tmp_path / "README.md"
    link.symlink_to(Path("cards") / "model.md")
    code, output = _export(runs["bbnli"], link)
    assert code == 0, output
    assert link.is_symlink() and "through the link" in output and str(target) in output
    assert _datasets(target) == {"nlibias/bbnli"}


def _export_at_once(run: str, card: str, start: multiprocessing.synchronize.Barrier) -> None:
    """One export (in a child process) that asks for the card's lock when the other one does, and
    takes 0.3 s between reading the card and writing it (what a slow disk or a busy machine does)."""
    import time
    from contextlib import AbstractContextManager

    from nlibias.io import atomic
    from nlibias.jobs import model_index

    ask_for_lock, read_card = atomic.locked_update, model_index.read_card

    def at_once(path: str | Path) -> AbstractContextManager[Path]:
        start.wait()
        return ask_for_lock(path)

    def slowly(path: Path) -> tuple[str, dict[str, object]]:
        found = read_card(path)
        time.sleep(0.3)
        return found

    atomic.locked_update, model_index.read_card = at_once, slowly  # type: ignore[assignment]
    model_index.export_model_index(run, card=card)


def test_two_exports_at_once_keep_both_benchmarks(runs: dict[str, Path], tmp_path: Path) -> None:
    """Without the lock both read the card before either wrote: one benchmark's results were lost
    (2 of 5 rounds by hand; every round here, where both read at once)."""
    context = multiprocessing.get_context("fork")
    for round_ in range(5):
        card = tmp_path / f"README{round_}.md"
        card.write_text("---\nlicense: mit\n---\n# m\n")
        start = context.Barrier(2)
        workers = [
            context.Process(target=_export_at_once, args=(str(runs[name]), str(card), start))
            for name in ("bbnli", "wq-nli")
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(60)
        assert [worker.exitcode for worker in workers] == [0, 0]
        assert _datasets(card) == {"nlibias/bbnli", "nlibias/wq-nli"}, f"round {round_}"


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        ("\ufeff---\nlicense: mit\n---\n# m\n", 1, "byte-order mark"),
        ("---\nlicense: mit\n# m\n", 1, "never closed"),
        (
            "\n---\nlicense: [mit\n---\n# m\n",
            3,
            "invalid YAML",
        ),  # line 3 (after a blank line 1): its list is never closed
        ("---\n- license\n- mit\n---\n# m\n", 2, "a list, not a mapping"),
        ("---\nlicense: mit\n\ttags: [x]\n---\n", 3, "invalid YAML: found character '\\t'"),
    ],
)
def test_a_damaged_metadata_block_is_refused_with_its_line(
    runs: dict[str, Path], tmp_path: Path, text: str, line: int, reason: str
) -> None:
    card = tmp_path / "README.md"
    card.write_text(text, encoding="utf-8")
    code, output = _export(runs["bbnli"], card)
    assert code == 2, output
    assert f"{card}:{line}:" in output and reason in output and "Traceback" not in output
    assert card.read_text(encoding="utf-8") == text


def test_no_third_party_message_and_values_rounded_to_their_intervals(
    runs: dict[str, Path], tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """A card without a block gets one, without huggingface_hub's "metadata block was not found"
    on stderr; each value keeps two significant digits of its interval's half-width."""
    import math

    from nlibias.jobs.model_index import export_model_index

    card = tmp_path / "README.md"
    card.write_text("# m\n")
    capfd.readouterr()
    result = export_model_index(runs["bbnli"], card=card)
    assert capfd.readouterr().err == ""
    overall = json.loads((runs["bbnli"] / "metrics.json").read_text())["models"]["m"]["overall"]
    values = {m["type"]: m["value"] for m in result.model_index[0]["results"][0]["metrics"]}
    for measure, value in values.items():
        low, high = overall["ci"][measure]
        digits = 1 - math.floor(math.log10((high - low) / 2))  # e.g. half-width 2.2 -> 1 decimal
        assert value == round(overall[measure], max(0, digits)) != overall[measure]


def test_the_name_comes_from_name_or_the_card(runs: dict[str, Path], tmp_path: Path) -> None:
    card = tmp_path / "README.md"
    card.write_text("---\nmodel_name: my-org/my-nli\n---\n# m\n")
    assert _export(runs["bbnli"], card)[0] == 0
    from huggingface_hub import ModelCard

    assert ModelCard.load(card).data.model_name == "my-org/my-nli"  # the card's, not the run's "m"
    code, output = _export(runs["bbnli"], card, "--name", "my-org/renamed", "--json")
    assert code == 0, output
    printed = json.loads(output)
    assert printed["card"] == str(card) and printed["model_index"][0]["name"] == "my-org/renamed"
    assert ModelCard.load(card).data.model_name == "my-org/renamed"
    done = runner.invoke(app, ["export", "model-index", str(runs["bbnli"]), "--name", " "])
    assert done.exit_code == 2 and "--name" in done.output


def test_a_generative_model_is_named_by_its_model_not_its_run_key(tmp_path: Path) -> None:
    """The key adds the prompt and answer mode (``lm|prompt=true|scored``), which the task's name
    carries; the model's name is the one the run recorded."""
    import nlibias

    run = tmp_path / "audit"  # a copy: the fixture's warning (no manifest) is given once per directory
    shutil.copytree(
        Path(__file__).parent / "fixtures" / "regression" / "bbnli-generative-fake" / "audit", run
    )
    with pytest.warns(UserWarning):  # a fixture written before run manifests
        (entry,) = nlibias.model_index(run, model="lm|prompt=true|scored")
    assert entry["name"] == "lm"
    assert yaml.safe_load(yaml.safe_dump(entry))["name"] == "lm"


@pytest.mark.parametrize(
    ("name", "text", "reason"),
    [
        ("rules.yaml", "margin: 0.01\n", "--card must be a Markdown model card"),
        ("card.json", '{"license": "mit"}\n', "--card must be a Markdown model card"),
        (
            "README.md",
            "license: mit\ntags: [nli]\n",
            "holds YAML (a mapping of license, tags) and no front matter",
        ),
        ("README.md", '{"license": "mit"}\n', "holds JSON (an object) and no front matter"),
    ],
)
def test_a_card_that_is_not_markdown_is_refused_and_left_as_it_was(
    runs: dict[str, Path], tmp_path: Path, name: str, text: str, reason: str
) -> None:
    card = tmp_path / name
    card.write_text(text, encoding="utf-8")
    code, output = _export(runs["bbnli"], card)
    assert code == 2 and reason in output and str(card) in output, output
    assert card.read_text(encoding="utf-8") == text
    card = tmp_path / "notes.md"  # Markdown without front matter, a 'key: value' line in its prose
    card.write_text("# My model\n\nNote: trained on MNLI.\n", encoding="utf-8")
    assert _export(runs["bbnli"], card)[0] == 0 and card.read_text(encoding="utf-8").startswith("---\n")
