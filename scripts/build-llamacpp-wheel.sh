#!/usr/bin/env bash
# Build llama-cpp-python once into the wheel cache that scripts/setup.sh installs from
# (NLIBIAS_WHEELS, default ~/.cache/nlibias/wheels). scripts/setup.sh runs this when the cache
# has no wheel for the venv's Python; run it by hand to rebuild. Concurrent runs wait for each
# other (flock) and build once. Measured cold build times: docs/generative.md (real server in CI).
set -euo pipefail
cd "$(dirname "$0")/.."
WHEELS=${NLIBIAS_WHEELS:-$HOME/.cache/nlibias/wheels}
VERSION=${NLIBIAS_LLAMACPP_VERSION:-0.3.36}
PY=.venv/bin/python
tag=$("$PY" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')
mkdir -p "$WHEELS"
exec 9>"$WHEELS/.build.lock"
flock 9
if [ -n "$(ls "$WHEELS"/llama_cpp_python-"$VERSION"-"$tag"-*.whl 2>/dev/null)" ]; then
  echo "llama-cpp-python $VERSION for $tag is already in $WHEELS"
  exit 0
fi
tmp=$(mktemp -d "$WHEELS/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)
"$PY" -m pip wheel --no-deps -w "$tmp" "llama-cpp-python==$VERSION"
mv "$tmp"/llama_cpp_python-*.whl "$WHEELS"/   # whole wheels only: a killed build leaves none
echo "built llama-cpp-python $VERSION in $(($(date +%s) - start)) s into $WHEELS"
