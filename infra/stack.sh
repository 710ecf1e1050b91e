#!/usr/bin/env bash
# The local stack: PostgreSQL, the Temporal dev server (with its web UI) and MinIO, on loopback.
#
#   infra/stack.sh install   install what is missing (Debian packages, Go-built temporal + minio)
#   infra/stack.sh up        install, then start each component that is not answering yet
#   infra/stack.sh status    say where each component answers, or that it does not
#   infra/stack.sh down      stop what this script started
#
# Idempotent: `up` twice starts nothing the second time. Every port and directory can be moved
# with the STACK_* variables below; the platform reads the matching APP_* variables (see README).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STACK_DIR="${STACK_DIR:-$ROOT/.stack}"
# Go-built binaries live where the machine keeps its caches, so a later session or CI reuses them.
TOOLS_DIR="${STACK_TOOLS_DIR:-$HOME/.cache/drivelab/bin}"
TEMPORAL_VERSION="v1.5.1" # later tags carry a `replace` directive that `go install` refuses
# MinIO no longer tags releases as Go modules; this pseudo-version is the commit `@latest` resolved to
# on 2026-11-23. Pinned so that a new upstream commit cannot break a fresh install.
MINIO_VERSION="${STACK_MINIO_VERSION:-v0.0.0-20260212201848-7aac2a2c5b7c}"

PG_HOST=127.0.0.1
PG_PORT="${STACK_PG_PORT:-55432}"
PG_USER="${STACK_PG_USER:-drivelab}"
PG_PASSWORD="${STACK_PG_PASSWORD:-drivelab}"
PG_DB="${STACK_PG_DB:-drivelab}"
TEMPORAL_PORT="${STACK_TEMPORAL_PORT:-7233}"
TEMPORAL_UI_PORT="${STACK_TEMPORAL_UI_PORT:-8233}"
MINIO_PORT="${STACK_MINIO_PORT:-9000}"
MINIO_CONSOLE_PORT="${STACK_MINIO_CONSOLE_PORT:-9001}"
MINIO_USER="${STACK_MINIO_USER:-drivelab}"
MINIO_PASSWORD="${STACK_MINIO_PASSWORD:-drivelab-local-secret}"

log() { printf '[stack] %s\n' "$*" >&2; }

# Go is only needed to build the Temporal CLI and MinIO; the image keeps it outside the default PATH.
[ -x /usr/local/go/bin/go ] && case ":$PATH:" in *:/usr/local/go/bin:*) ;; *) PATH="$PATH:/usr/local/go/bin" ;; esac

# Registry downloads can hiccup; a transient failure should not fail a whole run.
retry() {
  local attempt
  for attempt in 1 2 3; do
    "$@" && return 0
    [ "$attempt" = 3 ] && return 1
    log "failed (attempt $attempt): $*; retrying"
    sleep $((attempt * 5))
  done
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_port() { # port name seconds
  local i
  for ((i = 0; i < $3 * 4; i++)); do
    port_open "$1" && return 0
    sleep 0.25
  done
  log "$2 did not open port $1 within $3 s; its log: $STACK_DIR/$2.log"
  tail -n 20 "$STACK_DIR/$2.log" >&2 || true
  return 1
}

pg_bin() {
  local d
  for d in /usr/lib/postgresql/*/bin; do [ -x "$d/initdb" ] && { echo "$d"; return; }; done
  return 1
}

as_pg_owner() { # initdb and postgres refuse to run as root
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

apt_install() {
  if [ "$(id -u)" != 0 ]; then log "need root to apt-get install $*"; return 1; fi
  if [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*Packages*' -print -quit 2>/dev/null)" ]; then
    apt-get update -qq
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

install_components() {
  local missing=()
  pg_bin >/dev/null || missing+=(postgresql)
  command -v ffmpeg >/dev/null || missing+=(ffmpeg)
  command -v chromium >/dev/null || missing+=(chromium)
  command -v tmux >/dev/null || missing+=(tmux) # canlab capture kit keyboard tests
  if ((${#missing[@]})); then
    log "installing Debian packages: ${missing[*]}"
    apt_install "${missing[@]}" || { retry apt-get update -qq && retry apt_install "${missing[@]}"; }
  fi
  mkdir -p "$TOOLS_DIR"
  go_tool temporal github.com/temporalio/cli/cmd/temporal "$TEMPORAL_VERSION"
  go_tool minio github.com/minio/minio "$MINIO_VERSION"
}

# Builds a Go tool into the cache once per version: a stamp beside the binary names the version it
# was built from, so changing a pin rebuilds instead of running whatever was cached before.
go_tool() { # name module version
  local name="$1" module="$2" version="$3" stamp="$TOOLS_DIR/$1.version"
  if [ -x "$TOOLS_DIR/$name" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$version" ]; then return; fi
  log "building $name $version (go install, cached in $TOOLS_DIR)"
  retry env GOBIN="$TOOLS_DIR" go install "$module@$version"
  echo "$version" >"$stamp"
}

start_postgres() {
  local bin data="$STACK_DIR/pg"
  bin="$(pg_bin)"
  if port_open "$PG_PORT"; then return; fi
  mkdir -p "$STACK_DIR"
  if [ ! -f "$data/PG_VERSION" ]; then
    log "initialising PostgreSQL in $data"
    mkdir -p "$data"
    [ "$(id -u)" = 0 ] && chown postgres:postgres "$data"
    chmod 700 "$data"
    as_pg_owner "$bin/initdb" -D "$data" -U postgres --auth=trust -E UTF8 >/dev/null
  fi
  touch "$STACK_DIR/postgres.log"
  [ "$(id -u)" = 0 ] && chown postgres:postgres "$STACK_DIR/postgres.log"
  [ "$(id -u)" = 0 ] && chmod o+x "$STACK_DIR" "$(dirname "$STACK_DIR")" 2>/dev/null || true
  as_pg_owner "$bin/pg_ctl" -D "$data" -l "$STACK_DIR/postgres.log" -w -o "-p $PG_PORT -h $PG_HOST -k /tmp -c fsync=off -c max_connections=200" start >/dev/null
  wait_port "$PG_PORT" postgres 30
  # Role and database for the platform (idempotent).
  as_pg_owner "$bin/psql" -h "$PG_HOST" -p "$PG_PORT" -U postgres -qtAc \
    "DO \$\$BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$PG_USER') THEN CREATE ROLE $PG_USER LOGIN SUPERUSER PASSWORD '$PG_PASSWORD'; END IF; END\$\$;" >/dev/null
  if ! as_pg_owner "$bin/psql" -h "$PG_HOST" -p "$PG_PORT" -U postgres -qtAc "SELECT 1 FROM pg_database WHERE datname = '$PG_DB'" | grep -q 1; then
    as_pg_owner "$bin/createdb" -h "$PG_HOST" -p "$PG_PORT" -U postgres -O "$PG_USER" "$PG_DB"
  fi
}

start_daemon() { # name pidfile command...
  local name="$1"
  shift
  mkdir -p "$STACK_DIR"
  # setsid: the daemon outlives the shell that started it (and the test runner that called us).
  setsid nohup "$@" >"$STACK_DIR/$name.log" 2>&1 </dev/null &
  echo $! >"$STACK_DIR/$name.pid"
}

start_temporal() {
  if port_open "$TEMPORAL_PORT"; then return; fi
  log "starting the Temporal dev server"
  start_daemon temporal "$TOOLS_DIR/temporal" server start-dev \
    --ip 127.0.0.1 --port "$TEMPORAL_PORT" --ui-port "$TEMPORAL_UI_PORT" \
    --db-filename "$STACK_DIR/temporal.db" --log-level warn \
    --sqlite-pragma journal_mode=WAL --sqlite-pragma synchronous=OFF
  wait_port "$TEMPORAL_PORT" temporal 60
  wait_port "$TEMPORAL_UI_PORT" temporal 30
}

start_minio() {
  if port_open "$MINIO_PORT"; then return; fi
  log "starting MinIO"
  mkdir -p "$STACK_DIR/minio"
  MINIO_ROOT_USER="$MINIO_USER" MINIO_ROOT_PASSWORD="$MINIO_PASSWORD" MINIO_BROWSER=on \
    start_daemon minio "$TOOLS_DIR/minio" server "$STACK_DIR/minio" \
    --address "127.0.0.1:$MINIO_PORT" --console-address "127.0.0.1:$MINIO_CONSOLE_PORT" --quiet
  wait_port "$MINIO_PORT" minio 60
  # The console listens a moment after the API; the status report that follows checks both.
  wait_port "$MINIO_CONSOLE_PORT" minio-console 30
  local i
  for ((i = 0; i < 120; i++)); do
    curl -fsS "http://127.0.0.1:$MINIO_PORT/minio/health/ready" >/dev/null 2>&1 && return
    sleep 0.25
  done
  log "MinIO is not ready"
  return 1
}

stop_daemon() {
  local pidfile="$STACK_DIR/$1.pid"
  [ -f "$pidfile" ] || return 0
  local pid
  pid="$(cat "$pidfile")"
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
}

status() {
  local ok=0
  report() { if port_open "$2"; then printf '  %-14s %s\n' "$1" "$3"; else printf '  %-14s DOWN (port %s)\n' "$1" "$2"; ok=1; fi; }
  echo "Local stack ($STACK_DIR):"
  report postgresql "$PG_PORT" "postgresql://$PG_USER:***@$PG_HOST:$PG_PORT/$PG_DB"
  report temporal "$TEMPORAL_PORT" "127.0.0.1:$TEMPORAL_PORT (namespace default)"
  report temporal-ui "$TEMPORAL_UI_PORT" "http://127.0.0.1:$TEMPORAL_UI_PORT"
  report minio "$MINIO_PORT" "http://127.0.0.1:$MINIO_PORT"
  report minio-console "$MINIO_CONSOLE_PORT" "http://127.0.0.1:$MINIO_CONSOLE_PORT (user $MINIO_USER)"
  return $ok
}

# The APP_* settings that point the platform at this stack; `eval "$(infra/stack.sh env)"`.
print_env() {
  cat <<EOF
export DATABASE_URL='postgresql://$PG_USER:$PG_PASSWORD@$PG_HOST:$PG_PORT/$PG_DB'
export APP_TEMPORAL__ADDRESS='127.0.0.1:$TEMPORAL_PORT'
export APP_TEMPORAL__UI_URL='http://127.0.0.1:$TEMPORAL_UI_PORT'
export APP_STORAGE__ENDPOINT='127.0.0.1'
export APP_STORAGE__PORT='$MINIO_PORT'
export APP_STORAGE__ACCESS_KEY='$MINIO_USER'
export APP_STORAGE__SECRET_KEY='$MINIO_PASSWORD'
export APP_STORAGE__CONSOLE_URL='http://127.0.0.1:$MINIO_CONSOLE_PORT'
export STACK_TEMPORAL_BIN='$TOOLS_DIR/temporal'
export STACK_MINIO_BIN='$TOOLS_DIR/minio'
EOF
}

case "${1:-}" in
  install) install_components ;;
  up)
    install_components
    start_postgres
    start_temporal
    start_minio
    status
    ;;
  status) status ;;
  env) print_env ;;
  down)
    stop_daemon minio
    stop_daemon temporal
    if [ -f "$STACK_DIR/pg/postmaster.pid" ]; then as_pg_owner "$(pg_bin)/pg_ctl" -D "$STACK_DIR/pg" -m fast stop >/dev/null || true; fi
    log "stopped"
    ;;
  *)
    echo "usage: infra/stack.sh install|up|status|env|down" >&2
    exit 2
    ;;
esac
