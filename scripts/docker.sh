#!/usr/bin/env bash
# The Docker daemon and image the sandbox tests use, offline:
#   scripts/docker.sh start   start dockerd when no daemon answers (containers get no network)
#   scripts/docker.sh image   build openmanus-sandbox:bookworm from Debian's archive, unless it exists
#   scripts/docker.sh stop    stop the daemon `start` started (by its pid), never another one
# Needs root (or sudo). Images cannot be pulled here: the image is made with debootstrap (about a
# minute, once) and imported. State lives under $OPENMANUS_DOCKER_DIR (/var/lib/openmanus-docker).
set -euo pipefail
dir=${OPENMANUS_DOCKER_DIR:-/var/lib/openmanus-docker}
image=${OPENMANUS_SANDBOX_IMAGE:-openmanus-sandbox:bookworm}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
pidfile=$dir/dockerd.pid
log=$dir/dockerd.log

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
answers() { as_root docker info >/dev/null 2>&1; }
fail() { echo "docker.sh: $*" >&2; exit 1; }

# Limits are only enforced when the daemon sees the memory and CPU controllers (cgroup v1 or v2).
check_limits() {
  local support
  support=$(as_root docker info --format '{{.MemoryLimit}} {{.CPUCfsQuota}} {{.PidsLimit}}' 2>/dev/null) || fail "docker info failed"
  [ "$support" = "true true true" ] ||
    fail "the daemon cannot enforce memory/CPU/pids limits here (memory, cpu-quota, pids: $support); check the cgroup controllers under /sys/fs/cgroup"
}

start() {
  if answers; then check_limits; return; fi
  command -v dockerd >/dev/null 2>&1 || fail "dockerd is not installed (apt-get install docker.io)"
  as_root mkdir -p "$dir"
  as_root mkdir -p "$dir/tmp"
  # No bridge and no iptables: containers get no network, and nothing listens on a private address.
  # A temp dir of its own: the daemon outlives whoever started it (a test run whose TMPDIR is
  # removed when it ends), and runc writes each exec's state under TMPDIR (exit 126 once it is gone).
  as_root env TMPDIR="$dir/tmp" bash -c "setsid dockerd --bridge=none --iptables=false --data-root '$dir/data' --pidfile '$pidfile' >>'$log' 2>&1 < /dev/null &"
  for _ in $(seq 1 100); do
    answers && { check_limits; echo "docker.sh: dockerd started (pid $(as_root cat "$pidfile"), log $log)"; return; }
    sleep 0.2
  done
  tail -n 20 "$log" >&2 || true
  fail "dockerd did not start (log: $log)"
}

stop() {
  [ -f "$pidfile" ] || { echo "docker.sh: no daemon started by this script"; return; }
  local pid
  pid=$(as_root cat "$pidfile")
  as_root kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do
    as_root kill -0 "$pid" 2>/dev/null || { echo "docker.sh: dockerd (pid $pid) stopped"; return; }
    sleep 0.2
  done
  fail "dockerd (pid $pid) did not stop"
}

build_image() {
  answers || fail "no Docker daemon answers (scripts/docker.sh start)"
  as_root mkdir -p "$dir"
  # One build at a time: test files may ask for the image together.
  exec 9>"$dir/image.lock"
  flock 9
  if as_root docker image inspect "$image" >/dev/null 2>&1; then return; fi
  command -v debootstrap >/dev/null 2>&1 || fail "debootstrap is not installed (apt-get install debootstrap)"
  rootfs=$(as_root mktemp -d "$dir/rootfs.XXXXXX")
  trap 'as_root rm -rf "$rootfs"' EXIT
  echo "docker.sh: building $image from $mirror (about a minute)"
  # python3 for python_execute, procps for ps/kill inside the sandbox.
  as_root debootstrap --variant=minbase --include=python3,procps bookworm "$rootfs" "$mirror" >"$dir/debootstrap.log" 2>&1 ||
    fail "debootstrap failed (log: $dir/debootstrap.log)"
  as_root rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  as_root tar -C "$rootfs" -c . | as_root docker import -c 'CMD ["/bin/bash"]' -c 'ENV LANG=C.UTF-8' - "$image" >/dev/null
  echo "docker.sh: built $image"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  image) build_image ;;
  *) echo "usage: scripts/docker.sh start|stop|image" >&2; exit 2 ;;
esac
