#!/usr/bin/env bash
# cantools and python-can, the reference tools of canlab's DBC and capture tests and of its decode
# benchmark, in a virtualenv of their own (infra/python-venv.sh): `install`, or `path` (installs if
# needed, prints its python). It sits in ~/.cache/drivelab/venv-can, so a later session or CI reuses
# it. CAN_TOOLS_VENV moves it.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE_DIR="$(dirname "${STACK_TOOLS_DIR:-$HOME/.cache/drivelab/bin}")"
# shellcheck source=infra/python-venv.sh
source "$ROOT/infra/python-venv.sh"

VENV_NAME=can-tools
VENV_DIR="${CAN_TOOLS_VENV:-$CACHE_DIR/venv-can}"
REQUIREMENTS="$ROOT/tools/can/requirements.txt"
PYTHON_MIN=10
VENV_BIN="$VENV_DIR/bin/python"
venv_check() { "$VENV_BIN" -c 'import can, cantools' >/dev/null; }

venv_main "$@"
