#!/usr/bin/env bash
# The reference implementations of the tracking metrics (py-motmetrics, TrackEval;
# tools/reference/mot-requirements.txt), used by tools/reference/mot_reference.py, which wrote the
# committed reference numbers under core/metrics/mot/fixtures/, in a virtualenv of its own
# (infra/python-venv.sh): `install`, or `path` (installs if needed, prints its python). Tests read
# the stored numbers and never need it.
# It sits in ~/.cache/drivelab/venv-mot, so a later session or CI reuses it. MOT_TOOLS_VENV moves it.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CACHE_DIR="$(dirname "${STACK_TOOLS_DIR:-$HOME/.cache/drivelab/bin}")"
# shellcheck source=infra/python-venv.sh
source "$ROOT/infra/python-venv.sh"

VENV_NAME=mot-tools
VENV_DIR="${MOT_TOOLS_VENV:-$CACHE_DIR/venv-mot}"
REQUIREMENTS="$ROOT/tools/reference/mot-requirements.txt"
PYTHON_MIN=11
VENV_BIN="$VENV_DIR/bin/python"
venv_check() { "$VENV_BIN" -c 'import motmetrics, trackeval.metrics, scipy.optimize' >/dev/null; }

venv_main "$@"
