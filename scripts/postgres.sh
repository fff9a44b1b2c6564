#!/usr/bin/env bash
# A throwaway Postgres for tests and local workers: its own data directory, port and socket
# directory, listening on 127.0.0.1 only, stopped by its PID.
#
#   scripts/postgres.sh start DIR PORT   prints the database URL once it accepts connections
#   scripts/postgres.sh stop DIR         fast shutdown by the PID in DIR/data/postmaster.pid
#
# initdb refuses to run as root, so as root the cluster belongs to the `postgres` user.
set -euo pipefail

pg_bin() {
  local dir
  for dir in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    [ -x "$dir/initdb" ] && { echo "$dir"; return; }
  done
  command -v initdb >/dev/null 2>&1 && { dirname "$(command -v initdb)"; return; }
  echo "postgres.sh: no initdb found; install Debian's postgresql (scripts/setup.sh does)" >&2
  exit 1
}

# Runs a command as the cluster's owner: the `postgres` user when we are root, else ourselves.
as_owner() {
  if [ "$(id -u)" = 0 ]; then
    su postgres -s /bin/sh -c "$(printf '%q ' "$@")"
  else
    "$@"
  fi
}

start() {
  local dir=$1 port=$2 bin
  bin=$(pg_bin)
  mkdir -p "$dir/data" "$dir/sock"
  if [ "$(id -u)" = 0 ]; then chown -R postgres:postgres "$dir"; fi
  chmod 700 "$dir/data"
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 >"$dir/initdb.log" 2>&1 ||
      { cat "$dir/initdb.log" >&2; exit 1; }
  fi
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 30 \
    -o "-p $port -k $dir/sock -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null ||
    { cat "$dir/postgres.log" >&2; exit 1; }
  echo "postgresql://postgres@127.0.0.1:$port/postgres"
}

stop() {
  local dir=$1 pid
  [ -f "$dir/data/postmaster.pid" ] || return 0
  pid=$(head -1 "$dir/data/postmaster.pid")
  kill -INT "$pid" 2>/dev/null || return 0
  # Fast shutdown: wait until the postmaster has gone (up to 30 s).
  for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  echo "postgres.sh: postmaster $pid did not stop" >&2
  exit 1
}

case "${1:-}" in
  start) [ $# -eq 3 ] || { echo "usage: $0 start DIR PORT" >&2; exit 2; }; start "$2" "$3" ;;
  stop) [ $# -eq 2 ] || { echo "usage: $0 stop DIR" >&2; exit 2; }; stop "$2" ;;
  *) echo "usage: $0 start DIR PORT | stop DIR" >&2; exit 2 ;;
esac
