#!/usr/bin/env bash
# A pinned Python tool set in a virtualenv of its own, shared by infra/fuzz-tools.sh and
# infra/reader-tools.sh. Source it, set the variables below, then call `venv_main "$@"`:
#
#   VENV_NAME      what the log lines say (e.g. fuzz-tools)
#   VENV_DIR       the virtualenv
#   REQUIREMENTS   the pinned requirements file
#   PYTHON_MIN     the lowest Python minor version (3.N), e.g. 10
#   VENV_BIN       the file `path` prints (and whose presence means installed)
#   venv_check()   a function run after an install that fails when the tools do not work
#
#   <script> install   create the virtualenv and install REQUIREMENTS, only when it is missing or
#                      the requirements (or the interpreter) changed
#   <script> path      install if needed, then print VENV_BIN
set -euo pipefail

log() { printf '[%s] %s\n' "$VENV_NAME" "$*" >&2; }

python_bin() {
  local p
  for p in python3 python; do
    if command -v "$p" >/dev/null && "$p" -c "import sys; sys.exit(sys.version_info < (3, $PYTHON_MIN))" 2>/dev/null; then
      command -v "$p"
      return
    fi
  done
  log "needs Python >= 3.$PYTHON_MIN (python3 not found or too old)"
  return 1
}

# What the installed virtualenv was built from: the requirements and the interpreter.
wanted_stamp() {
  { cat "$REQUIREMENTS"; "$1" -c 'import sys; print(sys.version)'; } | sha256sum | cut -d' ' -f1
}

venv_install() {
  local py wanted attempt stamp="$VENV_DIR/.requirements.sha256"
  py="$(python_bin)"
  wanted="$(wanted_stamp "$py")"
  if [ -x "$VENV_BIN" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$wanted" ]; then return 0; fi
  log "installing $REQUIREMENTS into $VENV_DIR"
  mkdir -p "$(dirname "$VENV_DIR")"
  if ! "$py" -m venv --clear "$VENV_DIR" >/dev/null 2>&1; then
    # Debian splits venv support (ensurepip) into its own package.
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      log "installing python3-venv"
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
    fi
    "$py" -m venv --clear "$VENV_DIR"
  fi
  # Registry downloads can hiccup; a transient failure should not fail a whole run.
  for attempt in 1 2 3; do
    "$VENV_DIR/bin/pip" install --disable-pip-version-check --no-input -q -r "$REQUIREMENTS" && break
    if [ "$attempt" = 3 ]; then
      log "pip install failed"
      return 1
    fi
    log "pip install failed (attempt $attempt); retrying"
    sleep $((attempt * 5))
  done
  venv_check
  echo "$wanted" >"$stamp"
}

venv_main() {
  case "${1:-}" in
    install) venv_install ;;
    path)
      venv_install
      echo "$VENV_BIN"
      ;;
    *)
      echo "usage: $0 install | path" >&2
      exit 2
      ;;
  esac
}
