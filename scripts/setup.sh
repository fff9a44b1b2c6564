#!/usr/bin/env bash
# One-time set-up on a fresh machine: pnpm, the system parts the tools use, then the packages.
# `.ci/run` runs this too. Needs root (or sudo) for the system packages.
set -uo pipefail
cd "$(dirname "$0")/.."
sudo_if_needed() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
apt_install() { (sudo_if_needed apt-get update -qq && sudo_if_needed apt-get install -y -qq "$@") >/dev/null 2>&1; }

command -v pnpm >/dev/null 2>&1 || npm i -g pnpm@12.4.2 || { echo "setup: could not install pnpm"; exit 1; }
# Manus runs Python; the sandbox sees only system directories, so a system python3 is needed
# (a pyenv python under a home directory is not visible inside it).
[ -x /usr/bin/python3 ] || [ -x /usr/local/bin/python3 ] || apt_install python3 || { echo "setup: python3 is required"; exit 1; }
# bubblewrap: python_execute's default sandbox. Without it Python runs as a separate user (as root)
# and the sandbox tests check the clear refusal instead.
command -v bwrap >/dev/null 2>&1 || apt_install bubblewrap || echo "setup: bubblewrap could not be installed; Python runs without it"
# Chromium: the browser tool drives it through playwright-core, and the chart tests open charts in it.
# Debian's package (never `npx playwright install`, which downloads from the internet).
command -v chromium >/dev/null 2>&1 || apt_install chromium || echo "setup: chromium could not be installed; the browser tests will fail"
# Postgres: @openmanus/durable keeps its runs there; its tests start a throwaway cluster with
# scripts/postgres.sh (Debian's initdb and pg_ctl).
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || apt_install postgresql || echo "setup: postgresql could not be installed; the durable tests will fail"
# Docker (the sandbox provider's tests run against a real daemon) and debootstrap (the test image is
# built offline from Debian's archive, since images cannot be pulled). The daemon is started only
# when tests need it: scripts/docker.sh start|image|stop.
command -v dockerd >/dev/null 2>&1 || apt_install docker.io || echo "setup: docker.io could not be installed; the docker sandbox tests will fail"
command -v debootstrap >/dev/null 2>&1 || apt_install debootstrap || echo "setup: debootstrap could not be installed; the sandbox image cannot be built"
# @openmanus/sqlite's better-sqlite3 compiles its binding where no prebuilt one can be downloaded:
# that needs make and a C++ compiler, and Node's headers, which node-gyp would download too, so it
# is pointed at the ones installed with Node when they are there.
{ command -v make && command -v g++; } >/dev/null 2>&1 || apt_install build-essential || echo "setup: build-essential could not be installed; better-sqlite3 needs it where it cannot download a prebuilt binary"
node_prefix=$(node -p 'require("node:path").resolve(process.execPath, "..", "..")')
if [ -z "${npm_config_nodedir:-}" ] && [ -f "$node_prefix/include/node/common.gypi" ]; then
  export npm_config_nodedir="$node_prefix"
fi
pnpm install --frozen-lockfile
