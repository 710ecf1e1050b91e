#!/usr/bin/env bash
# The independent readers of the dataset-export tests (pycocotools, pyarrow, duckdb, globox + PyYAML
# for YOLO), used by tools/readers/read_export.py through testkit/readers.ts, in a virtualenv of its own.
#
#   infra/reader-tools.sh install   create the virtualenv and install tools/readers/requirements.txt,
#                                   only when it is missing or the requirements changed
#   infra/reader-tools.sh path      install if needed, then print the path of the virtualenv's python
#
# The virtualenv sits beside the stack's Go-built tools (STACK_TOOLS_DIR, ~/.cache/drivelab/bin by
# default), in ~/.cache/drivelab/venv-readers, so a later session or CI reuses it. READERS_VENV moves it.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REQUIREMENTS="$ROOT/tools/readers/requirements.txt"
CACHE_DIR="$(dirname "${STACK_TOOLS_DIR:-$HOME/.cache/drivelab/bin}")"
VENV="${READERS_VENV:-$CACHE_DIR/venv-readers}"
STAMP="$VENV/.requirements.sha256"

log() { printf '[reader-tools] %s\n' "$*" >&2; }

python_bin() {
  local p
  for p in python3 python; do
    if command -v "$p" >/dev/null && "$p" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      command -v "$p"
      return
    fi
  done
  log "the export readers need Python >= 3.11 (python3 not found or too old)"
  return 1
}

# What the installed virtualenv was built from: the requirements and the interpreter.
wanted_stamp() {
  { cat "$REQUIREMENTS"; "$1" -c 'import sys; print(sys.version)'; } | sha256sum | cut -d' ' -f1
}

install() {
  local py wanted attempt
  py="$(python_bin)"
  wanted="$(wanted_stamp "$py")"
  if [ -x "$VENV/bin/python" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$wanted" ]; then return 0; fi
  log "installing the export readers into $VENV"
  mkdir -p "$(dirname "$VENV")"
  if ! "$py" -m venv --clear "$VENV" >/dev/null 2>&1; then
    # Debian splits venv support (ensurepip) into its own package.
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      log "installing python3-venv"
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
    fi
    "$py" -m venv --clear "$VENV"
  fi
  # Registry downloads can hiccup; a transient failure should not fail a whole run.
  for attempt in 1 2 3; do
    "$VENV/bin/pip" install --disable-pip-version-check --no-input -q -r "$REQUIREMENTS" && break
    if [ "$attempt" = 3 ]; then
      log "pip install failed"
      return 1
    fi
    log "pip install failed (attempt $attempt); retrying"
    sleep $((attempt * 5))
  done
  "$VENV/bin/python" -c 'import duckdb, globox, pyarrow.parquet, pycocotools.coco, pycocotools.mask, yaml' >/dev/null
  echo "$wanted" >"$STAMP"
}

case "${1:-}" in
  install) install ;;
  path)
    install
    echo "$VENV/bin/python"
    ;;
  *)
    echo "usage: infra/reader-tools.sh install | path" >&2
    exit 2
    ;;
esac
