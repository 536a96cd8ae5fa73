"""Run the bad-input corpus (tests/bad_input_corpus.py) through the CLI and print the counts:
inputs tried, clear errors, warnings, unclear errors, internal errors, tracebacks, silent
acceptances, and every case that is not a clear refusal (or an expected warning).

Compare two checkouts by running it with each one's sources first on the path:

    PYTHONPATH=src .venv/bin/python bench/bad_inputs.py            # this checkout
    PYTHONPATH=/work/main/src .venv/bin/python bench/bad_inputs.py # main ("before")

It needs $NLIBIAS_DATA_DIR (BBNLI's JSON files) and runs fake models only (about a minute on 2 cores).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from bad_input_cases import cases
from bad_input_corpus import run_corpus


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", choices=["bad", "all"], default="bad", help="Cases to list.")
    parser.add_argument("--only", default="", help="Run only the cases whose names contain this text.")
    args = parser.parse_args()
    import nlibias

    data_dir = Path(
        os.environ.get("NLIBIAS_DATA_DIR", Path(__file__).resolve().parents[2] / "shared" / "data")
    )
    with tempfile.TemporaryDirectory() as work:
        outcomes = run_corpus(Path(work), data_dir, only=args.only)
    counts = Counter(o.verdict for o in outcomes)
    known = {case.name for case in cases() if getattr(case, "known", "")}  # strict xfails in the tests
    print(f"nlibias from {Path(nlibias.__file__).parent}")
    for outcome in outcomes:
        if args.show == "all" or outcome.verdict not in ("clear", "warned"):
            print(
                f"  {outcome.verdict:<9} {outcome.case:<48} exit {outcome.exit_code}: {outcome.message[:150]}"
                + ("  [known defect]" if outcome.case in known else "")
            )
    print(
        f"inputs tried {len(outcomes)}: clear errors {counts['clear']}, warned {counts['warned']}, "
        f"unclear errors {counts['unclear']}, internal errors {counts['internal']}, "
        f"tracebacks {counts['traceback']}, silent acceptances {counts['silent']} "
        f"(known defects, strict xfails in the tests: {sum(o.case in known for o in outcomes)})"
    )


if __name__ == "__main__":
    main()
