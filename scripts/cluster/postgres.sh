#!/bin/sh
# PostgreSQL in the cluster's infrastructure image, as user postgres: a fresh volume is
# initialised once (the password from POSTGRES_PASSWORD, scram for every network client, the
# database POSTGRES_DB), then the server runs in the foreground and stops on SIGTERM.
set -eu
bin=/usr/lib/postgresql/15/bin
data="${PGDATA:-/var/lib/postgresql/data}"
if [ ! -s "$data/PG_VERSION" ]; then
  : "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required to initialise the database}"
  pw="$(mktemp)"
  printf '%s\n' "$POSTGRES_PASSWORD" > "$pw"
  "$bin/initdb" -D "$data" -U postgres --pwfile="$pw" -E UTF8 --locale=C.UTF-8 --auth-local=trust --auth-host=scram-sha-256 > /dev/null
  rm -f "$pw"
  echo 'host all all all scram-sha-256' >> "$data/pg_hba.conf"
  "$bin/pg_ctl" -D "$data" -o "-c listen_addresses='' -c unix_socket_directories=/tmp" -w start > /dev/null
  "$bin/psql" -h /tmp -U postgres -q -c "CREATE DATABASE \"${POSTGRES_DB:-obmen}\""
  "$bin/pg_ctl" -D "$data" -m fast -w stop > /dev/null
  echo "postgres.sh: initialised $data with the database ${POSTGRES_DB:-obmen}"
fi
exec "$bin/postgres" -D "$data" -c listen_addresses='*' -c unix_socket_directories=/tmp -c max_connections="${POSTGRES_MAX_CONNECTIONS:-100}"
