#!/usr/bin/env bash
# Schemathesis, the API fuzzer of test/api-fuzz.int.test.ts, in a virtualenv of its own.
#
#   infra/fuzz-tools.sh install   create the virtualenv and install tools/fuzz/requirements.txt,
#                                 only when it is missing or the requirements changed
#   infra/fuzz-tools.sh path      install if needed, then print the path of the `st` binary
#
# The virtualenv sits beside the stack's Go-built tools (STACK_TOOLS_DIR, ~/.cache/drivelab/bin by
# default), in ~/.cache/drivelab/venv-fuzz, so a later session or CI reuses it. FUZZ_VENV moves it.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REQUIREMENTS="$ROOT/tools/fuzz/requirements.txt"
CACHE_DIR="$(dirname "${STACK_TOOLS_DIR:-$HOME/.cache/drivelab/bin}")"
VENV="${FUZZ_VENV:-$CACHE_DIR/venv-fuzz}"
STAMP="$VENV/.requirements.sha256"

log() { printf '[fuzz-tools] %s\n' "$*" >&2; }

python_bin() {
  local p
  for p in python3 python; do
    if command -v "$p" >/dev/null && "$p" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
      command -v "$p"
      return
    fi
  done
  log "schemathesis needs Python >= 3.10 (python3 not found or too old)"
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
  if [ -x "$VENV/bin/st" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$wanted" ]; then return 0; fi
  log "installing schemathesis into $VENV"
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
  "$VENV/bin/st" --version >/dev/null
  echo "$wanted" >"$STAMP"
}

case "${1:-}" in
  install) install ;;
  path)
    install
    echo "$VENV/bin/st"
    ;;
  *)
    echo "usage: infra/fuzz-tools.sh install | path" >&2
    exit 2
    ;;
esac
