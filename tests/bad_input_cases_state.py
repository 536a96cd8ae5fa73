"""Bad inputs of the run state: validation runs (queue, import files, annotation database), the
prediction cache, options and output locations (part of the corpus of ``bad_input_cases``)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

from bad_input_corpus import (
    HUGE,
    LATIN1,
    QUEUE_ROWS,
    Base,
    Case,
    adder,
    audit_args,
    base_queue_text,
    score_args,
)


def validation_cases() -> list[Case]:
    """Validation: queue, import files, annotation database."""
    found: list[Case] = []

    def validation(
        name: str, build_input: Callable[[Path, Base], tuple[list[str], str]], expect: str = "error"
    ) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            shutil.copytree(base.validation_run, d / "vrun")
            return build_input(d / "vrun", base)

        found.append(Case(f"validation/{name}", build, expect))

    def kept_file(body: bytes) -> Callable[[Path, Base], tuple[list[str], str]]:
        def build(run: Path, base: Base) -> tuple[list[str], str]:
            path = run / "filter" / "kept.jsonl"
            path.parent.mkdir()
            path.write_bytes(body)
            return ["validate", "prescreen", str(run), "--judge", "fake:j", "--no-progress"], str(path)

        return build

    validation("prescreen-kept-not-utf8", kept_file(b'{"subtopic": "s", "hypothesis": "' + LATIN1 + b'"}\n'))
    validation("prescreen-kept-truncated", kept_file(b'{"subtopic": "s", "hypo'))
    validation("prescreen-kept-wrong-type", kept_file(b'{"subtopic": "s", "hypothesis": 5}\n'))

    def queue_fault(body: bytes, command: str = "status") -> Callable[[Path, Base], tuple[list[str], str]]:
        def build(run: Path, base: Base) -> tuple[list[str], str]:
            path = run / "validation" / "queue.csv"
            path.write_bytes(body)
            return ["validate", command, str(run)], str(path)

        return build

    run_queue = base_queue_text()
    queue_csv = run_queue.encode()
    validation("queue-not-utf8", queue_fault(queue_csv + LATIN1 + b"\n"))
    validation("queue-short-row", queue_fault(queue_csv + b"hx,s,gender\n"))
    validation("queue-unterminated-quote", queue_fault(queue_csv + b'hx,s,gender,"Men,pro,m,t,w,p,1,,,\n'))
    validation("queue-samples-not-number", queue_fault(run_queue.replace(",2,,,\n", ",two,,,\n", 1).encode()))
    validation(
        "queue-huge-field", queue_fault(queue_csv + b"hx,s,gender," + b"x" * HUGE + b",pro,m,t,w,p,1,,,\n")
    )
    validation("queue-not-utf8-export", queue_fault(queue_csv + LATIN1 + b"\n", "export"))
    validation("queue-not-utf8-resolve", queue_fault(queue_csv + LATIN1 + b"\n", "resolve"))

    def annotations_db(body: Callable[[bytes], bytes]) -> Callable[[Path, Base], tuple[list[str], str]]:
        def build(run: Path, base: Base) -> tuple[list[str], str]:
            path = run / "validation" / "annotations.sqlite"
            db = sqlite3.connect(path)
            db.execute("CREATE TABLE t (x)")
            db.executemany("INSERT INTO t VALUES (?)", [("x" * 500,)] * 200)
            db.commit()
            db.close()
            path.write_bytes(body(path.read_bytes()))
            return ["validate", "status", str(run)], str(path)

        return build

    validation("annotations-garbage-header", annotations_db(lambda b: b"not a database at all" + b[21:]))
    validation("annotations-truncated", annotations_db(lambda b: b[: len(b) // 3 + 7]))

    def import_file(
        name: str, body: bytes, suffix: str, fmt: str = "auto"
    ) -> Callable[[Path, Base], tuple[list[str], str]]:
        def build(run: Path, base: Base) -> tuple[list[str], str]:
            path = run.parent / f"{name}{suffix}"
            path.write_bytes(body)
            return ["validate", "import", str(run), str(path), "--format", fmt], str(path)

        return build

    judgement_header = b"hypothesis_id,annotator,judgement,stereotype\n"
    first = QUEUE_ROWS[0][0].encode()
    good_row = first + b",ana,valid,pro\n"
    validation(
        "import-csv-not-utf8",
        import_file("j", judgement_header + first + b",ana,valid," + LATIN1 + b"\n", ".csv"),
    )
    validation(
        "import-csv-short-row", import_file("j", judgement_header + good_row + first + b",bob\n", ".csv")
    )
    validation(
        "import-csv-unterminated-quote",
        import_file("j", judgement_header + good_row + first + b',"bob,valid,pro\n', ".csv"),
    )
    validation(
        "import-csv-huge-field",
        import_file("j", judgement_header + first + b",ana,valid," + b"x" * HUGE + b"\n", ".csv"),
    )
    validation(
        "import-csv-unknown-judgement", import_file("j", judgement_header + first + b",ana,maybe,\n", ".csv")
    )
    unjudged = import_file("j", judgement_header + good_row, ".csv")
    validation(
        "import-csv-unjudged", lambda run, base: (unjudged(run, base)[0], "have no judgement"), expect="warn"
    )
    validation(
        "import-json-not-utf8",
        import_file("ls", b'[{"data": {"hypothesis_id": "' + LATIN1 + b'"}}]', ".json"),
    )
    validation("import-json-truncated", import_file("ls", b'[{"data": {"hypothesis_id": "h', ".json"))
    ls_task = {"data": {"hypothesis_id": QUEUE_ROWS[0][0]}, "annotations": "valid"}
    validation(
        "import-label-studio-annotations-string",
        import_file("ls", json.dumps([ls_task]).encode(), ".json", "label-studio"),
    )
    ls_task2 = {"data": {"hypothesis_id": QUEUE_ROWS[0][0]}, "annotations": ["valid"]}
    validation(
        "import-label-studio-annotation-not-object",
        import_file("ls", json.dumps([ls_task2]).encode(), ".json", "label-studio"),
    )
    argilla = {"id": QUEUE_ROWS[0][0], "responses": ["valid"]}
    validation(
        "import-argilla-responses-list", import_file("ar", json.dumps([argilla]).encode(), ".json", "argilla")
    )
    argilla2 = {"id": QUEUE_ROWS[0][0], "responses": {"judgement": "valid"}}
    validation(
        "import-argilla-judgement-string",
        import_file("ar", json.dumps([argilla2]).encode(), ".json", "argilla"),
    )
    return found


def cache_cases() -> list[Case]:
    """Prediction cache."""
    found: list[Case] = []

    def cache(name: str, mutate: Callable[[bytes], bytes]) -> None:
        def build(d: Path, base: Base) -> tuple[list[str], str]:
            path = d / "cache.sqlite"
            path.write_bytes(mutate(base.cache.read_bytes()))
            args = ["audit", "--samples", str(base.samples), "--model", "fake:m", "--out", str(d / "o")]
            return [*args, "--bootstrap", "0", "--cache", str(path), "--quiet"], str(path)

        found.append(Case(f"cache/{name}", build))

    cache("garbage-header", lambda b: b"this is not sqlite!!" + b[20:])
    cache("truncated", lambda b: b[: len(b) // 2 + 100])
    cache("random-bytes", lambda b: bytes(range(256)) * 64)
    return found


def options_cases() -> list[Case]:
    """Options and output locations."""
    found: list[Case] = []
    add = adder(found)

    @add("options/seed-negative")
    def _(d: Path, base: Base) -> tuple[list[str], str]:
        return [*audit_args(base.samples, d), "--seed", "-5"], "seed"

    @add("options/bootstrap-negative")
    def _(d: Path, base: Base) -> tuple[list[str], str]:
        return [*score_args(base, base.predictions, d)[:-2], "--bootstrap", "-1"], "bootstrap"

    @add("options/by-unknown")
    def _(d: Path, base: Base) -> tuple[list[str], str]:
        return [*score_args(base, base.predictions, d), "--by", "foo"], "--by"

    @add("options/port-out-of-range")
    def _(d: Path, base: Base) -> tuple[list[str], str]:
        return ["validate", "serve", str(base.validation_run), "--port", "99999"], "--port"

    @add("output/out-is-a-file")
    def _(d: Path, base: Base) -> tuple[list[str], str]:
        blocker = d / "file"
        blocker.write_text("x")
        return ["expand", "bbnli", "--source", str(base.bbnli_dir), "--out", str(blocker / "sub")], str(
            blocker
        )

    @add("output/audit-out-under-a-file")
    def _(d: Path, base: Base) -> tuple[list[str], str]:
        blocker = d / "file"
        blocker.write_text("x")
        return [*audit_args(base.samples, d)[:-5], "--out", str(blocker / "o"), "--no-cache", "--quiet"], str(
            blocker
        )

    @add("output/cache-under-a-file")
    def _(d: Path, base: Base) -> tuple[list[str], str]:
        blocker = d / "file"
        blocker.write_text("x")
        args = ["audit", "--samples", str(base.samples), "--model", "fake:m", "--out", str(d / "o")]
        return [*args, "--bootstrap", "0", "--cache", str(blocker / "c.sqlite"), "--quiet"], str(blocker)

    @add("output/samples-missing")
    def _(d: Path, base: Base) -> tuple[list[str], str]:
        return audit_args(d / "nowhere", d), str(d / "nowhere")

    return found
