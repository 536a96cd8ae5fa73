#!/usr/bin/env bash
# Build llama-cpp-python once into the wheel cache that scripts/setup-tests.sh installs from
# (NLIBIAS_WHEELS, default ~/.cache/nlibias/wheels). scripts/setup-tests.sh runs this when the cache
# has no wheel; run it by hand to build ahead. Concurrent runs wait for each
# other (flock) and build once. Measured cold build times: docs/generative.md (real server in CI).
set -euo pipefail
cd "$(dirname "$0")/.."
WHEELS=${NLIBIAS_WHEELS:-$HOME/.cache/nlibias/wheels}
VERSION=${NLIBIAS_LLAMACPP_VERSION:-0.3.36}
mkdir -p "$WHEELS"
exec 9>"$WHEELS/.build.lock"
flock 9
# the wheel is tagged py3-none-<platform> (llama.cpp is loaded through ctypes): any Python 3 uses it
if [ -n "$(ls "$WHEELS"/llama_cpp_python-"$VERSION"-*.whl 2>/dev/null)" ]; then
  echo "llama-cpp-python $VERSION is already in $WHEELS"
  exit 0
fi
tmp=$(mktemp -d "$WHEELS/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)
# -v: the build steps reach the log ([done/total]), which scripts/setup-tests.sh reports every 30 s
.venv/bin/python -m pip wheel -v --no-deps -w "$tmp" "llama-cpp-python==$VERSION"
mv "$tmp"/llama_cpp_python-*.whl "$WHEELS"/   # whole wheels only: a killed build leaves none
echo "built llama-cpp-python $VERSION in $(($(date +%s) - start)) s into $WHEELS"
