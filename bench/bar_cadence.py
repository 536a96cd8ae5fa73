"""How often the command's progress bar moves during a token-probability audit on the embedded
SmolLM2 (CrowS-Pairs, causal scorer): the longest gap between two moves, against the 2 s a user
watching the bar should wait at most.

The bar is drawn only on a terminal; here the moves are counted whether or not it is drawn, by
timing each call of the command bar's ``advance`` that moves it (:class:`nlibias.runtime.progress.
CommandBar`). Model loading happens before the first move and is reported apart.

    NLIBIAS_DATA_DIR=../shared/data python bench/bar_cadence.py            # 120 pairs
    NLIBIAS_DATA_DIR=../shared/data python bench/bar_cadence.py --pairs 40
    NLIBIAS_DATA_DIR=../shared/data python bench/bar_cadence.py --generative   # BBNLI yes/no answers
"""

from __future__ import annotations

import argparse
import itertools
import tempfile
import time
from pathlib import Path
from typing import Any

import _common as common


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--pairs", type=int, default=120, help="CrowS-Pairs pairs to score (a stratified subset)"
    )
    parser.add_argument(
        "--generative",
        action="store_true",
        help="BBNLI yes/no answers (scored) instead of CrowS-Pairs scores",
    )
    parser.add_argument(
        "--max-tokens", type=int, default=None, help="the audit's max_tokens (default: its own)"
    )
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    args = parser.parse_args()
    common.set_threads(args.threads)

    import nlibias
    from nlibias.runtime import progress

    moves: list[float] = []
    original = progress.CommandBar.advance

    def timed(self: progress.CommandBar, amount: float) -> None:
        before = self.n
        original(self, amount)
        if self.n > before:
            moves.append(time.perf_counter())

    progress.CommandBar.advance = timed  # type: ignore[method-assign]
    with tempfile.TemporaryDirectory() as tmp:
        benchmark = "bbnli" if args.generative else "crows-pairs"
        samples = nlibias.expand(benchmark, out_dir=Path(tmp) / "samples")
        models: dict[str, Any] = (
            {"generative": ["smollm2"], "prompts": ["true"]} if args.generative else {"causal": ["smollm2"]}
        )
        if args.max_tokens is not None:
            models["max_tokens"] = args.max_tokens
        start = time.perf_counter()
        nlibias.audit(samples, **models, cache=False, bootstrap=0, limit=2 * args.pairs, progress=True)
        end = time.perf_counter()
    if not moves:
        raise SystemExit("the bar never moved")
    gaps = [b - a for a, b in itertools.pairwise(moves)] + [end - moves[-1]]
    print(
        f"{len(moves)} moves over {end - moves[0]:.1f} s of scoring ({moves[0] - start:.1f} s before the first)"
    )
    print(
        f"longest gap between moves: {max(gaps):.2f} s (target: at most 2 s); median {sorted(gaps)[len(gaps) // 2]:.2f} s"
    )


if __name__ == "__main__":
    main()
