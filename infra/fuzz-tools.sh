#!/usr/bin/env bash
# Schemathesis, the API fuzzer of test/api-fuzz.int.test.ts, in a virtualenv of its own
# (infra/python-venv.sh): `install`, or `path` (installs if needed, prints the `st` binary).
# It sits beside the stack's Go-built tools (STACK_TOOLS_DIR, ~/.cache/drivelab/bin by default), in
# ~/.cache/drivelab/venv-fuzz, so a later session or CI reuses it. FUZZ_VENV moves it.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE_DIR="$(dirname "${STACK_TOOLS_DIR:-$HOME/.cache/drivelab/bin}")"
# shellcheck source=infra/python-venv.sh
source "$ROOT/infra/python-venv.sh"

VENV_NAME=fuzz-tools
VENV_DIR="${FUZZ_VENV:-$CACHE_DIR/venv-fuzz}"
REQUIREMENTS="$ROOT/tools/fuzz/requirements.txt"
PYTHON_MIN=10
VENV_BIN="$VENV_DIR/bin/st"
venv_check() { "$VENV_BIN" --version >/dev/null; }

venv_main "$@"
