#!/usr/bin/env bash
# One-time set-up on a fresh machine: Node 22, pnpm, the system parts the tools use, then the
# packages. `.ci/run` runs this too. Needs root (or sudo) for the system packages.
set -uo pipefail
cd "$(dirname "$0")/.."
sudo_if_needed() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
apt_install() { (sudo_if_needed apt-get update -qq && sudo_if_needed apt-get install -y -qq "$@") >/dev/null 2>&1; }
node_major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

# Node 22 LTS or newer (20's support ended in April 2026, and the AI SDK providers need 22). Where
# the machine's node is older, npm's `node` package, which carries the official binary, goes into
# /usr/local: its bin/ comes before /usr/bin on PATH, and the system's node and npm stay as they are
# (`npm i -g` into npm's own prefix would collide with a packaged /usr/bin/node).
# OPENMANUS_NODE_PREFIX puts it elsewhere; its bin/ must then come first on PATH.
if [ "$(node_major node)" -lt 22 ]; then
  node_home=${OPENMANUS_NODE_PREFIX:-/usr/local}
  if [ "$(node_major "$node_home/bin/node")" -lt 22 ]; then
    echo "setup: installing Node 22 into $node_home (a shell that ran node before finds it after \`hash -r\`)"
    mkdir -p "$node_home" 2>/dev/null
    as_root=(); [ -w "$node_home" ] || as_root=(sudo_if_needed)
    "${as_root[@]}" npm install -g --prefix "$node_home" --loglevel=error --no-update-notifier node@22 >/dev/null
  fi
  hash -r # this shell remembers where the old `node` was
  if [ "$(node_major "$node_home/bin/node")" -lt 22 ]; then
    echo "setup: could not install Node 22 into $node_home (OPENMANUS_NODE_PREFIX picks a folder of yours, or install Node 22 yourself)"; exit 1
  elif [ "$(node_major node)" -lt 22 ]; then
    echo "setup: Node 22 is in $node_home/bin, but $(command -v node) comes first on PATH: put $node_home/bin first (or switch to Node 22 there) and run this again"; exit 1
  fi
fi

# Node 20 and 24 (and 22 where the machine's node is another major) for the release tests, which load
# every package on each Node it supports (test/release/loadEveryEntry.test.ts): npm's `node` package
# into ~/.cache/openmanus/node<major>, off PATH.
runtimes=$HOME/.cache/openmanus
for major in 20 22 24; do
  [ "$(node_major node)" = "$major" ] && continue
  [ "$(node_major "$runtimes/node$major/bin/node")" = "$major" ] && continue
  echo "setup: installing Node $major into $runtimes/node$major (for the release tests)"
  npm install -g --prefix "$runtimes/node$major" --loglevel=error --no-update-notifier "node@$major" >/dev/null ||
    echo "setup: could not install Node $major into $runtimes/node$major; the release tests will fail on it"
done

# pnpm goes beside the node that runs: npm's global prefix follows the node binary it runs on,
# which for npm's `node` package is that package's own folder, off PATH.
node_bin=$(dirname "$(command -v node)")
command -v pnpm >/dev/null 2>&1 || npm i -g --prefix "$(dirname "$node_bin")" --loglevel=error --no-update-notifier pnpm@12.4.2 >/dev/null || { echo "setup: could not install pnpm"; exit 1; }
hash -r
command -v pnpm >/dev/null 2>&1 || { echo "setup: pnpm is in $node_bin, which is not on PATH"; exit 1; }
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
# is pointed at the ones installed with Node when they are there: beside the binary, or in the
# platform package that npm's `node` package keeps them in.
{ command -v make && command -v g++; } >/dev/null 2>&1 || apt_install build-essential || echo "setup: build-essential could not be installed; better-sqlite3 needs it where it cannot download a prebuilt binary"
node_headers=$(node -p '
const { resolve } = require("node:path");
const prefix = resolve(process.execPath, "..", "..");
const dirs = [prefix, resolve(prefix, "node_modules", `node-${process.platform}-${process.arch}`)];
dirs.find((dir) => require("node:fs").existsSync(resolve(dir, "include/node/common.gypi"))) ?? ""')
if [ -z "${npm_config_nodedir:-}" ] && [ -n "$node_headers" ]; then
  export npm_config_nodedir="$node_headers"
fi
pnpm install --frozen-lockfile || exit
# A binding built for another Node (packages installed before the switch to 22) fails to load:
# pnpm install leaves it, so it is built again for this one.
sqlite_loads() { (cd packages/sqlite && node -e 'new (require("better-sqlite3"))(":memory:").close()') >/dev/null 2>&1; }
if ! sqlite_loads; then
  pnpm rebuild better-sqlite3 >/dev/null 2>&1
  sqlite_loads || echo "setup: better-sqlite3 does not load on Node $(node -v) (\`pnpm rebuild better-sqlite3\` says why); the sqlite tests will fail"
fi
