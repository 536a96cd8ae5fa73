"""The places a sample passes on its way in, followed from ``nlibias.audit`` (issue 49's count).

``nlibias.audit`` reads a samples file of two samples (a premise with a non-ASCII character, so
the text door has work) with a fake model; every nlibias function entered from the audit's start
until the samples are read and checked (``read_benchmark_samples`` returns) is recorded, leaving
out the calls that are not the read: the argument declarations, the model set, the options, the
output guard (it compares the paths of inputs and outputs before anything runs), and
the check that scores the samples once with placeholder outputs (the measures), and the columns'
own builders (the samples' destination: ``SampleColumns.from_samples`` is one place). A *place*
is a distinct function entered (a comprehension, a module or class body, a dataclass's generated
method is none); a *move up* is an entry into a module of a higher layer (the import
contract in pyproject.toml) than the function entered just before it, counted over the functions'
first entries in order (the path of the first sample; later samples repeat it). Counted by
function and by module (a module's consecutive functions are one place).

    python bench/sample_path.py          # prints the places in order, then the two counts
"""

from __future__ import annotations

import inspect
import json
import sys
import tempfile
from itertools import pairwise
from pathlib import Path
from types import FrameType

import nlibias
from nlibias.catalog import registry

LAYERS = [
    "cli", "jobs integrations", "catalog", "report validation", "extension debias explanations", "io",
    "runtime", "models", "benchmarks metrics", "schema", "textio", "errors version",
]  # fmt: skip
_RANK = {package: len(LAYERS) - i for i, names in enumerate(LAYERS) for package in names.split()}
_LEFT_OUT = (
    "nlibias.schema.declared", "nlibias.runtime", "nlibias.metrics", "nlibias.models", "nlibias.catalog.builtin",
    "nlibias.io.overwrites",  # the output guard compares paths (device, inode); it reads no sample
)  # fmt: skip
_NOT_PLACES = ("<", "__create_fn__")  # module and class bodies, comprehensions, dataclasses' methods


def _rank(module: str) -> int:
    parts = module.split(".")
    return _RANK.get(parts[1], 0) if len(parts) > 1 else len(LAYERS) + 1  # nlibias/__init__: the top


def trace() -> list[tuple[str, str]]:
    rows = [
        {"id": f"a:{s}", "source": "bbnli", "domain": "d", "subtopic": "t", "premise": "Zoë waits.",
         "hypothesis": f"The {s} one waits.", "gold": "neutral", "stereotype": s, "pair_key": "a"}
        for s in ("pro", "anti")
    ]  # fmt: skip
    path = Path(tempfile.mkdtemp()) / "samples.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    entered: list[tuple[str, str]] = []
    state: dict[str, object] = {"on": False, "done": False, "skipping": None}
    reader = registry.read_benchmark_samples.__code__

    def profile(frame: FrameType, event: str, arg: object) -> None:
        module = frame.f_globals.get("__name__", "")
        if state["done"] or not module.startswith("nlibias"):
            return
        code = frame.f_code
        if event == "call" and code.co_name == "audit" and module == "nlibias":
            state["on"] = True
        if not state["on"]:
            return
        if event == "return":
            state["done"] = code is reader
            if frame is state["skipping"]:
                state["skipping"] = None
            return
        if event != "call" or state["skipping"] is not None:
            return
        if module.startswith(_LEFT_OUT) or code.co_name == "score":  # not the read: its whole call
            state["skipping"] = frame
            return
        if not code.co_flags & inspect.CO_NEWLOCALS or code.co_qualname.startswith(_NOT_PLACES):
            return  # a module or class body (an import), a comprehension, a dataclass's __init__
        if "<locals>" in code.co_qualname or (
            module == "nlibias.schema.columns" and code.co_name != "from_samples"
        ):
            return  # inside a place: its own comprehensions; the columns it fills
        if (module, code.co_qualname) not in entered:
            entered.append((module, code.co_qualname))

    sys.setprofile(profile)
    try:
        nlibias.audit(path, models=["fake:a"], cache=False, bootstrap=0, progress=False)
    finally:
        sys.setprofile(None)
    return entered


def main() -> None:
    places = trace()
    moves = 0
    for i, (module, name) in enumerate(places):
        up = i > 0 and _rank(module) > _rank(places[i - 1][0])
        moves += up
        print(f"{'^' if up else ' '} {module}.{name}")
    hops = [m for i, (m, _) in enumerate(places) if i == 0 or m != places[i - 1][0]]
    up_hops = sum(_rank(b) > _rank(a) for a, b in pairwise(hops))
    print(f"functions: {len(places)} places, {moves} moves up")
    print(f"modules: {len(hops)} places, {up_hops} moves up ({' > '.join(hops)})")


if __name__ == "__main__":
    main()
