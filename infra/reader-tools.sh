#!/usr/bin/env bash
# The independent readers of the dataset-export tests (pycocotools, pyarrow, duckdb, globox + PyYAML
# for YOLO), used by tools/readers/read_export.py through testkit/readers.ts, in a virtualenv of its
# own (infra/python-venv.sh): `install`, or `path` (installs if needed, prints its python).
# It sits in ~/.cache/drivelab/venv-readers, so a later session or CI reuses it. READERS_VENV moves it.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE_DIR="$(dirname "${STACK_TOOLS_DIR:-$HOME/.cache/drivelab/bin}")"
# shellcheck source=infra/python-venv.sh
source "$ROOT/infra/python-venv.sh"

VENV_NAME=reader-tools
VENV_DIR="${READERS_VENV:-$CACHE_DIR/venv-readers}"
REQUIREMENTS="$ROOT/tools/readers/requirements.txt"
PYTHON_MIN=11
VENV_BIN="$VENV_DIR/bin/python"
venv_check() { "$VENV_BIN" -c 'import duckdb, globox, pyarrow.parquet, pycocotools.coco, pycocotools.mask, yaml' >/dev/null; }

venv_main "$@"
