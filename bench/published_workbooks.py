"""Read paper 004's published evaluation workbooks (not shipped: the authors' repository has no
licence) and print, per set, the rows read and the premise caveats counted, against the paper's
Table 1 (1,900 / 1,900 / 3,800 rows).

Get the files from github shanyas10/Evaluating-gender-bias at commit bdb4a8e (``dataset/``), then:

    PYTHONPATH=src .venv/bin/python bench/published_workbooks.py /tmp/p004

A folder without the workbooks prints what is missing and exits 0 (nothing to check).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from nlibias.benchmarks.occupation_eval_sets import EXPECTED_ROWS, OCCUPATION_EVAL_FILES
from nlibias.benchmarks.occupations import expand_occupations


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="The folder holding the authors' .xlsx files.")
    args = parser.parse_args()
    for name, (file, _) in OCCUPATION_EVAL_FILES.items():
        path = args.folder / file
        if not path.is_file():
            print(f"{name}: {path} is missing; skipped")
            continue
        expansion = expand_occupations(str(path))
        record = expansion.summary()["eval_sets"][0]
        caveats = record["premise_caveats"]
        expected = EXPECTED_ROWS[name.removesuffix("-eval")]
        print(
            f"{name}: {record['rows']:,} rows read (Table 1: {expected:,}; "
            f"{'same' if record['rows'] == expected else 'DIFFERENT'}), authors' file: "
            f"{record['authors_file'] is not None}; premise caveats: {caveats['rows']} rows "
            f"({caveats['gendered_word']} gendered word, {caveats['occupation_not_named']} occupation "
            f"not named), first {caveats['cells'][:1]}"
        )


if __name__ == "__main__":
    main()
