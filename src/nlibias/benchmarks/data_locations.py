r"""Where benchmark data comes from: explicit path → ``$NLIBIAS_DATA_DIR`` → user cache → pinned download.

Layout under a data directory: ``bbnli/<domain>/<subtopic file>.json``,
``wq-nli/winoqueer_nli.csv``, ``crows-pairs/crows_pairs_anonymized.csv``,
``winoqueer/winoqueer_final.csv`` and ``occupations-eval/<SNLI|MNLI|OOD>_Evaluation_Set.xlsx``
(paper 004's evaluation sets). Downloads are pinned to upstream commits and checked file by
file against SHA-256 sums (or, for WinoQueer and paper 004's workbooks, the git blob id: the SHA-1
of ``"blob <size>\0"`` followed by the content) recorded here; offline, a missing file is an error that says where to
put it.

>>> git_blob_id(b"hello\n")  # `printf 'hello\n' | git hash-object --stdin`
'ce013625030ba8dba906f756967f9e9ca394464a'
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import urllib.request
from pathlib import Path

from platformdirs import user_cache_dir

from nlibias.errors import DataNotFoundError

BBNLI_COMMIT = "9f55895637b92a7e8ae29c07f9a769499e8287fe"
WQ_NLI_COMMIT = "547cb0a81eeb3102ffa114aa35d3d70bc4843597"

# Upstream location of each file of the layout, and its SHA-256. The sums are those of the copy
# the project is tested against (the pinned releases); a download that differs is refused.
_BBNLI_URL = f"https://raw.githubusercontent.com/feyzaakyurek/bbnli/{BBNLI_COMMIT}/data/nli/"
_WQ_URL = f"https://raw.githubusercontent.com/katyfelkner/wq-nli/{WQ_NLI_COMMIT}/data/"
PINNED_FILES: dict[str, tuple[str, str]] = {
    f"bbnli/{rel}": (_BBNLI_URL + rel, digest)
    for rel, digest in {
        "gender/man_is_to_breadwinner.json": "51fb8cefdca24d1e6041f43a8f321408e9fb6a85786f0fe3fd4811955c1cb841",
        "gender/man_is_to_programmer.json": "cd64ccfb6b7325484e4bd44d873c8e92a1fedb7d92aec859dd3de26e01fad745",
        "gender/man_is_to_rational.json": "f521a05e971c99fcfd4d5437c2e12c97e8dddc8e848c651856e0e76ff9984fe2",
        "gender/man_is_to_surgeon.json": "45d4de971289e24363c0cdcbee16d65b73bc9c27e073888880100cd26b97bfee",
        "gender/woman_is_to_homemaker.json": "fab715c677beddb6d2f9e1499cb4962b6c123e82be4600704f773ff439680cb2",
        "race/asian_men_to_feminine.json": "e63933edba1c6191acbb63d4852cb97ba394c859c24b4cc2414ffab816dcafca",
        "race/black_is_to_criminal.json": "ea59ab379d0a121bbbeb873d9a086b9bed74e4cf599bb536d18f43a9d7b52ca3",
        "race/black_is_to_impoverished.json": "daa9c955792df3607c71856466f3acabfb6c0fbfa7dbc98886d649250dddbc87",
        "race/black_people_use_drugs.json": "a4c0f7d0b4a6c6bf1b3547edcf8aa380427b77ed181e1aa27f341bbb9d594c5d",
        "race/white_is_to_clean.json": "54ae3f09b62e4d831d3e15c8461cbf737d506a299d60d7e4f22b0461725db3fe",
        "religion/catholic_woman_to_many_kids.json": "a7cc85a4d6421fb578c3fb1cb80954ff43ef83b8f611df96fb74ebf70c9cb1e3",
        "religion/jewish_woman_to_many_kids.json": "048927c2a1c9398ade38a693131545fdab69aa246f3ecc23e4bbd8a9b3f654e6",
        "religion/mormon_man_to_oppressive.json": "7eab6228612296a7f61d275ba76b22b3adcb7010ec43ae5b8c2b881f40baaf1a",
        "religion/muslim_man_to_many_wives.json": "fd9399b1aa937be61f169f4b467e8cb02cef1de6f93245cf3e7c06d2b36f35cd",
        "religion/muslim_man_to_oppressive.json": "8300edee1d2afa598707cba3f5d00e3cf23b75763d80ee1034068550f73f4450",
        "religion/muslim_women_to_invisible.json": "edc2d8901720ac4fc6616e535f49aab7b85abcec12ae6f1d06d54b130997f7b6",
    }.items()
}
PINNED_FILES["wq-nli/winoqueer_nli.csv"] = (
    _WQ_URL + "winoqueer_nli.csv",
    "f0a3a9201692b74cde50fec2aa42caa21c951c0746650346f996174282db34af",
)

CROWS_PAIRS_COMMIT = "8aaac11"
WINOQUEER_COMMIT = "1180ba6"
PINNED_FILES["crows-pairs/crows_pairs_anonymized.csv"] = (
    f"https://raw.githubusercontent.com/nyu-mll/crows-pairs/{CROWS_PAIRS_COMMIT}/data/crows_pairs_anonymized.csv",
    "dfb36986ce0502abbaf7055b9176da3d08d48e07df1251991b5dfbcbceab9d0c",
)
PINNED_FILES["winoqueer/winoqueer_final.csv"] = (
    f"https://raw.githubusercontent.com/katyfelkner/winoqueer/{WINOQUEER_COMMIT}/data/winoqueer_final.csv",
    "gitblob:0c874a4b98b41435a2359e9a69d95ab7bd95302d",
)
"""WinoQueer's file is pinned by its git blob id (what ``git ls-tree`` shows for it upstream)."""

# Paper 004's evaluation sets (the authors' Excel workbooks; the repository has no licence, so
# nlibias never ships them: it reads a user's copy or downloads one, checked by git blob id).
OCCUPATION_EVAL_COMMIT = "bdb4a8e636e0f11c8aa887a53a101fcd968a9fc3"
OCCUPATION_EVAL_DIR = "occupations-eval"
_OCCUPATION_EVAL_URL = (
    f"https://raw.githubusercontent.com/shanyas10/Evaluating-gender-bias/{OCCUPATION_EVAL_COMMIT}/dataset/"
)
OCCUPATION_EVAL_FILES = {
    "snli-eval": ("SNLI_Evaluation_Set.xlsx", "e3580dcbbe2937774dcd538b0025a7101380353d"),
    "mnli-eval": ("MNLI_Evaluation_Set.xlsx", "f116ede15974d3269a930a6ea1bb1027ca2347c2"),
    "ood-eval": ("OOD_Evaluation_Set.xlsx", "5f2eb6bde442fa26d52c294d543ac565769e7944"),
}
"""Each evaluation set's name (``--source snli-eval``), its file and its upstream git blob id."""
for _name, (_file, _blob) in OCCUPATION_EVAL_FILES.items():
    PINNED_FILES[f"{OCCUPATION_EVAL_DIR}/{_file}"] = (_OCCUPATION_EVAL_URL + _file, f"gitblob:{_blob}")

BENCHMARK_DIRS = {
    "bbnli": "bbnli",
    "wq-nli": "wq-nli",
    "crows-pairs": "crows-pairs",
    "winoqueer": "winoqueer",
    **{name: OCCUPATION_EVAL_DIR for name in OCCUPATION_EVAL_FILES},
}
BENCHMARK_FILES = {
    "wq-nli": "winoqueer_nli.csv",
    "crows-pairs": "crows_pairs_anonymized.csv",
    "winoqueer": "winoqueer_final.csv",
    **{name: file for name, (file, _) in OCCUPATION_EVAL_FILES.items()},
}
"""The one file of each single-file benchmark (BBNLI is a directory)."""


def user_data_dir() -> Path:
    """The user cache folder that downloads go to."""
    return Path(user_cache_dir("nlibias")) / "data"


def candidate_data_dirs(explicit: str | Path | None = None) -> list[tuple[str, Path]]:
    """The places searched, in order, each with the reason it is searched."""
    found: list[tuple[str, Path]] = []
    if explicit is not None:
        found.append(("the path you gave", Path(explicit)))
    env = os.environ.get("NLIBIAS_DATA_DIR")
    if env:
        found.append(("NLIBIAS_DATA_DIR", Path(env)))
    found.append(("the user cache", user_data_dir()))
    return found


def resolve_benchmark_path(
    benchmark: str, explicit: str | Path | None = None, *, download: bool = True
) -> Path:
    """Path of a benchmark's data (a directory for ``bbnli``, the CSV for ``wq-nli``).

    ``explicit`` may point at the benchmark itself (a BBNLI directory or CSV) or at a data dir
    that contains it. Without local data, the pinned upstream files are downloaded into the user
    cache (checksums verified); when that fails, the error lists where the files may go.
    """
    if benchmark not in BENCHMARK_DIRS:
        raise DataNotFoundError(f"unknown benchmark {benchmark!r}; known: {', '.join(BENCHMARK_DIRS)}")
    if explicit is not None:
        path = Path(explicit)
        if not path.exists():
            raise DataNotFoundError(f"{path} does not exist")
        inner = path / BENCHMARK_DIRS[benchmark]
        if inner.exists():
            path = inner
        return _benchmark_file(benchmark, path)
    found = locate_benchmark(benchmark)
    if found is not None:
        return found[1]
    if download:
        try:
            return _benchmark_file(benchmark, download_benchmark(benchmark))
        except (OSError, ValueError) as exc:
            reason = f"download failed ({exc})"
    else:
        reason = "downloads disabled"
    places = "\n".join(f"  - {why}: {p / BENCHMARK_DIRS[benchmark]}" for why, p in candidate_data_dirs())
    raise DataNotFoundError(
        f"no {benchmark} data found and {reason}.\nLooked in:\n{places}\n"
        f"Put the files there (layout: bbnli/<domain>/<subtopic>.json, wq-nli/winoqueer_nli.csv, "
        f"crows-pairs/crows_pairs_anonymized.csv, winoqueer/winoqueer_final.csv, "
        f"{OCCUPATION_EVAL_DIR}/<SNLI|MNLI|OOD>_Evaluation_Set.xlsx), "
        f"set NLIBIAS_DATA_DIR to a folder with that layout, or pass the path explicitly."
    )


def locate_benchmark(benchmark: str) -> tuple[str, Path] | None:
    """Where a benchmark's local data is found, without downloading: (why that place is searched,
    the benchmark's path), or ``None``. The first of :func:`candidate_data_dirs` that holds it.

    >>> locate_benchmark("bbnli")  # doctest: +SKIP
    ('NLIBIAS_DATA_DIR', PosixPath('/work/shared/data/bbnli'))
    """
    for why, base in candidate_data_dirs():
        path = base / BENCHMARK_DIRS[benchmark]
        if _has_data(benchmark, path):
            return why, _benchmark_file(benchmark, path)
    return None


def _has_data(benchmark: str, path: Path) -> bool:
    """True when ``path`` holds the benchmark's files (an empty folder left by a failed download does not)."""
    if benchmark in BENCHMARK_FILES:
        return _benchmark_file(benchmark, path).is_file()
    return path.is_dir() and any(path.rglob("*.json"))


def _benchmark_file(benchmark: str, path: Path) -> Path:
    if benchmark in BENCHMARK_FILES and path.is_dir():
        return path / BENCHMARK_FILES[benchmark]
    return path


def git_blob_id(content: bytes) -> str:
    r"""The git blob id of ``content``: SHA-1 of ``"blob <size>\0"`` + content."""
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


def content_digest(content: bytes, pinned: str) -> str:
    """``content``'s digest in the form of ``pinned`` (``gitblob:<sha1>`` or a bare SHA-256)."""
    if pinned.startswith("gitblob:"):
        return "gitblob:" + git_blob_id(content)
    return hashlib.sha256(content).hexdigest()


def download_benchmark(benchmark: str, target: Path | None = None) -> Path:
    """Download the pinned files of ``benchmark`` into ``target`` (default: the user cache).

    Each file is written to a temporary name, its SHA-256 checked, then renamed into place, so an
    interrupted download never leaves a file that looks complete.
    """
    base = target or user_data_dir()
    prefix = BENCHMARK_DIRS[benchmark] + "/"
    for rel, (url, digest) in PINNED_FILES.items():
        if not rel.startswith(prefix):
            continue
        if benchmark in BENCHMARK_FILES and rel != prefix + BENCHMARK_FILES[benchmark]:
            continue  # a folder of several single-file benchmarks (occupations-eval): this one only
        dest = base / rel
        if dest.exists() and content_digest(dest.read_bytes(), digest) == digest:
            continue
        with urllib.request.urlopen(url, timeout=30) as response:
            payload = response.read()
        actual = content_digest(payload, digest)
        if actual != digest:
            raise ValueError(f"checksum mismatch for {url}: expected {digest}, got {actual}")
        dest.parent.mkdir(parents=True, exist_ok=True)  # only once a file is good: no empty folders
        fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=".part-")
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
        os.replace(tmp, dest)
    return base / BENCHMARK_DIRS[benchmark]
