# shellcheck shell=bash
# A throw-away PostgreSQL server for the test run: sourced by scripts/test.sh.
#
#   pg_throwaway_start   initdb into a temp dir, start on a free 127.0.0.1 port (socket in the
#                        temp dir too), create database "test", export TEST_DATABASE_URL.
#   pg_throwaway_stop    stop it and delete the temp dir (safe to call twice; test.sh traps it).
#
# Installs Debian's postgresql package when no server binaries are found. initdb refuses to
# run as root, so as root the server runs as the "postgres" system user.

PG_THROWAWAY_DIR=""
PG_THROWAWAY_BIN=""
PG_THROWAWAY_USER=""

_pg_find_bin() {
  local dir
  dir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  if [[ -n "$dir" && -x "$dir/initdb" && -x "$dir/pg_ctl" ]]; then
    printf '%s\n' "$dir"
  fi
}

# Runs a command as the server's owner.
_pg_as_owner() {
  if [[ -n "$PG_THROWAWAY_USER" ]]; then
    runuser -u "$PG_THROWAWAY_USER" -- "$@"
  else
    "$@"
  fi
}

_pg_free_port() {
  local node_bin="${PG_THROWAWAY_NODE:-node}"
  "$node_bin" -e "const s=require('node:net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"
}

pg_throwaway_start() {
  PG_THROWAWAY_BIN=$(_pg_find_bin)
  if [[ -z "$PG_THROWAWAY_BIN" ]]; then
    if [[ $(id -u) -ne 0 ]]; then
      echo "pg-throwaway: no PostgreSQL server binaries under /usr/lib/postgresql and not root to install them" >&2
      return 1
    fi
    echo "pg-throwaway: installing Debian's postgresql package"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
    PG_THROWAWAY_BIN=$(_pg_find_bin)
    if [[ -z "$PG_THROWAWAY_BIN" ]]; then
      echo "pg-throwaway: postgresql installed but no initdb/pg_ctl under /usr/lib/postgresql/*/bin" >&2
      return 1
    fi
  fi

  if [[ $(id -u) -eq 0 ]]; then
    PG_THROWAWAY_USER=postgres
    if ! id -u postgres >/dev/null 2>&1; then
      useradd --system --home-dir /var/lib/postgresql --shell /bin/bash postgres
    fi
  fi

  # As root the owner is another user: a private TMPDIR (e.g. under /root) would be out of its reach.
  local parent="${TMPDIR:-/tmp}"
  if [[ -n "$PG_THROWAWAY_USER" ]]; then parent=/tmp; fi
  PG_THROWAWAY_DIR=$(mktemp -d "$parent/obmen-pg.XXXXXX")
  mkdir -p "$PG_THROWAWAY_DIR/sock"
  chmod 700 "$PG_THROWAWAY_DIR"
  if [[ -n "$PG_THROWAWAY_USER" ]]; then chown -R "$PG_THROWAWAY_USER:" "$PG_THROWAWAY_DIR"; fi

  local port
  port=$(_pg_free_port)
  echo "pg-throwaway: PostgreSQL $("$PG_THROWAWAY_BIN/postgres" --version | awk '{print $3}') in $PG_THROWAWAY_DIR on 127.0.0.1:$port"

  if ! _pg_as_owner "$PG_THROWAWAY_BIN/initdb" -D "$PG_THROWAWAY_DIR/data" -U postgres -A trust -E UTF8 --locale=C --no-sync >"$PG_THROWAWAY_DIR/initdb.log" 2>&1; then
    echo "pg-throwaway: initdb failed:" >&2
    cat "$PG_THROWAWAY_DIR/initdb.log" >&2
    return 1
  fi
  # Durability is worthless for a throw-away database; speed is not.
  local options="-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$PG_THROWAWAY_DIR/sock"
  options+=" -c max_connections=300 -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
  if ! _pg_as_owner "$PG_THROWAWAY_BIN/pg_ctl" -D "$PG_THROWAWAY_DIR/data" -l "$PG_THROWAWAY_DIR/server.log" -o "$options" -w -t 60 start >/dev/null; then
    echo "pg-throwaway: the server did not start:" >&2
    cat "$PG_THROWAWAY_DIR/server.log" >&2 || true
    return 1
  fi
  if ! "$PG_THROWAWAY_BIN/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -w -q -v ON_ERROR_STOP=1 -c 'CREATE DATABASE test' </dev/null; then
    echo "pg-throwaway: could not create database test" >&2
    return 1
  fi
  export TEST_DATABASE_URL="postgres://postgres@127.0.0.1:$port/test"
}

pg_throwaway_stop() {
  if [[ -z "$PG_THROWAWAY_DIR" ]]; then return 0; fi
  if [[ -f "$PG_THROWAWAY_DIR/data/postmaster.pid" ]]; then
    _pg_as_owner "$PG_THROWAWAY_BIN/pg_ctl" -D "$PG_THROWAWAY_DIR/data" -m immediate -w -t 30 stop >/dev/null 2>&1 || true
  fi
  rm -rf "$PG_THROWAWAY_DIR"
  echo "pg-throwaway: stopped and removed $PG_THROWAWAY_DIR"
  PG_THROWAWAY_DIR=""
}
