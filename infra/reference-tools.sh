#!/usr/bin/env bash
# The reference implementations of the quality metrics (pycocotools, faster-coco-eval, scikit-learn,
# statsmodels, krippendorff, scipy; tools/reference/requirements.txt), used by the scripts in
# tools/reference/ that wrote the committed reference numbers and by the quality benchmark, in a
# virtualenv of its own (infra/python-venv.sh): `install`, or `path` (installs if needed, prints its
# python). Tests read the stored numbers and never need it.
# It sits in ~/.cache/drivelab/venv-reference, so a later session or CI reuses it. REFERENCE_VENV moves it.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE_DIR="$(dirname "${STACK_TOOLS_DIR:-$HOME/.cache/drivelab/bin}")"
# shellcheck source=infra/python-venv.sh
source "$ROOT/infra/python-venv.sh"

VENV_NAME=reference-tools
VENV_DIR="${REFERENCE_VENV:-$CACHE_DIR/venv-reference}"
REQUIREMENTS="$ROOT/tools/reference/requirements.txt"
PYTHON_MIN=11
VENV_BIN="$VENV_DIR/bin/python"
venv_check() { "$VENV_BIN" -c 'import faster_coco_eval, krippendorff, pycocotools.cocoeval, scipy.optimize, sklearn.metrics, statsmodels.stats.inter_rater' >/dev/null; }

venv_main "$@"
