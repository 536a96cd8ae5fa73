"""What checking cached values costs: reading N cached classifier outputs (WQ-NLI's 76k distinct
pairs by default) the naive way (``SELECT`` + ``json.loads``, as before the checks) and the checked
way (:meth:`PredictionCache.get_checked` with the CRC-32 and :func:`is_probability_row`), and the
per-value bound a Python loop sets (one ``json.loads`` of a row).

    PYTHONPATH=src .venv/bin/python bench/cache_checks.py [--values 76000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from nlibias.runtime.cache import PredictionCache, is_probability_row


def _best(rounds: int, run: Callable[[], object]) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--values", type=int, default=76_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(0)
    rows = []
    for i in range(args.values):
        weights = [rng.random() + 1e-3 for _ in range(3)]
        rows.append((f"k{i:08d}", [w / sum(weights) for w in weights]))
    keys = [key for key, _ in rows]
    with tempfile.TemporaryDirectory() as work:
        path = Path(work) / "c.sqlite"
        with PredictionCache(path) as cache:
            cache.put_many(rows)

            def naive() -> dict:
                db = sqlite3.connect(path)
                found = {}
                for start in range(0, len(keys), 500):
                    chunk = keys[start : start + 500]
                    marks = ",".join("?" * len(chunk))
                    for key, text in db.execute(
                        f"SELECT key, value FROM outputs WHERE key IN ({marks})", chunk
                    ):
                        found[key] = json.loads(text.rpartition("#")[0])
                db.close()
                return found

            def checked() -> dict:
                found, rejected = cache.get_checked(keys, is_probability_row)
                assert rejected == 0
                return found

            assert naive() == checked()
            naive_s = _best(args.rounds, naive)
            checked_s = _best(args.rounds, checked)
            texts = [json.dumps(value) for _, value in rows]
            bound_s = _best(args.rounds, lambda: [json.loads(t) for t in texts])
    n = args.values
    print(f"{n} cached values, best of {args.rounds}")
    print(f"  naive (SELECT + json.loads)          {naive_s:7.3f} s  {n / naive_s:>10,.0f} values/s")
    print(f"  checked (CRC-32 + probability check) {checked_s:7.3f} s  {n / checked_s:>10,.0f} values/s")
    print(f"  bound: json.loads alone, no SQLite   {bound_s:7.3f} s  {n / bound_s:>10,.0f} values/s")
    print(f"  checked / naive time: {checked_s / naive_s:.2f}x")


if __name__ == "__main__":
    main()
