#!/usr/bin/env bash
# A throwaway Postgres for tests and local workers: its own data directory, port and socket
# directory, listening on 127.0.0.1 only, stopped by its PID. It is not open to every local user:
# TCP logins need the password generated at initdb (scram-sha-256), kept in DIR/password (0600,
# readable by whoever started the cluster), and its unix socket takes only the cluster's owner
# (peer), in a 0700 directory.
#
#   scripts/postgres.sh start DIR PORT     prints the database URL (with the password) once it
#                                          accepts connections
#   scripts/postgres.sh url DIR [DATABASE] prints the URL of DIR's cluster (database default postgres)
#   scripts/postgres.sh stop DIR           fast shutdown by the PID in DIR/data/postmaster.pid
#
# The URL holds the password: keep it in the environment (OPENMANUS_DATABASE_URL) or a file, not
# on a command line (every local user can read another process's arguments).
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
  if [ "$(id -u)" = 0 ]; then chown postgres:postgres "$dir" "$dir/data" "$dir/sock"; fi
  chmod 700 "$dir" "$dir/data" "$dir/sock"
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    # Ours, 0600; initdb reads a copy its user owns (as root, postgres), removed once it is done.
    (umask 077 && od -An -tx1 -N24 /dev/urandom | tr -d ' \n' >"$dir/password")
    install -m 600 "$dir/password" "$dir/pwfile"
    if [ "$(id -u)" = 0 ]; then chown postgres:postgres "$dir/pwfile"; fi
    as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth-host=scram-sha-256 --auth-local=peer \
      --pwfile="$dir/pwfile" -E UTF8 >"$dir/initdb.log" 2>&1 ||
      { rm -f "$dir/pwfile"; cat "$dir/initdb.log" >&2; exit 1; }
    rm -f "$dir/pwfile"
  elif [ ! -f "$dir/password" ] || grep -Eq '^[^#]*[[:space:]]trust([[:space:]]|$)' "$dir/data/pg_hba.conf"; then
    echo "postgres.sh: $dir was made by an older postgres.sh, open to every local user (trust); remove it and start again" >&2
    exit 1
  fi
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -t 30 \
    -o "-p $port -k $dir/sock -c listen_addresses=127.0.0.1 -c fsync=off -c unix_socket_permissions=0700" start >/dev/null ||
    { cat "$dir/postgres.log" >&2; exit 1; }
  echo "$port" >"$dir/port"
  url "$dir" postgres
}

url() {
  local dir=$1 database=${2:-postgres}
  [ -f "$dir/port" ] && [ -f "$dir/password" ] || { echo "postgres.sh: no cluster started in $dir" >&2; exit 1; }
  echo "postgresql://postgres:$(cat "$dir/password")@127.0.0.1:$(cat "$dir/port")/$database"
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
  url) [ $# -eq 2 ] || [ $# -eq 3 ] || { echo "usage: $0 url DIR [DATABASE]" >&2; exit 2; }; url "$2" "${3:-postgres}" ;;
  stop) [ $# -eq 2 ] || { echo "usage: $0 stop DIR" >&2; exit 2; }; stop "$2" ;;
  *) echo "usage: $0 start DIR PORT | url DIR [DATABASE] | stop DIR" >&2; exit 2 ;;
esac
