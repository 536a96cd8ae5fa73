#!/usr/bin/env bash
# The project's checks: lint, format, types, then the test suite (no network needed). First,
# what the tests need beyond scripts/setup.sh (once; later runs find it installed).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-tests.sh
export NLIBIAS_DATA_DIR=${NLIBIAS_DATA_DIR:-$(cd .. && pwd)/shared/data}
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
.venv/bin/ruff check src tests bench
.venv/bin/ruff format --check src tests bench
.venv/bin/mypy
.venv/bin/lint-imports --no-cache >/dev/null || .venv/bin/lint-imports --no-cache   # the layer contracts in pyproject.toml
.venv/bin/python -m pytest -q -rs "$@"   # -rs: every skipped test says why at the end
