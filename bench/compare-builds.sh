#!/usr/bin/env bash
# Compares built checkouts of Reception at 1 KiB JSON, durability full:
# the rate and the server's CPU time per acknowledged request (read from
# /proc/<pid>/stat around wrk), round after round so that each round sees
# the same machine. CPU per request is the steadier figure on a shared machine.
#
#   bench/compare-builds.sh ROUNDS NAME=DIR [NAME=DIR...]
#
# DIR is a checkout built with `npx tsc -p tsconfig.json && node scripts/copy-assets.mjs`
# (for an older commit: git archive <commit> | tar -x -C DIR, then link node_modules).
# COMPARE_DEFAULTS=1: each server gets the config of the bench's `reception defaults` case (one
# route, filtered on the event type, to a pull destination; event types, search and traffic
# counts are on without a config), so that a delivery's commit carries a forward.
set -euo pipefail
rounds=$1; shift
body=$(mktemp); script=$(mktemp --suffix .lua)
# COMPARE_BODY_BYTES (about 1 KiB by default): the pad's length, for large-body comparisons.
pad=${COMPARE_BODY_BYTES:-900}
node -e 'process.stdout.write(JSON.stringify({type:"invoice.paid",data:{object:{id:"in_1",pad:"x".repeat(Number(process.argv[1]))}}}))' "$pad" > "$body"
printf 'wrk.method="POST"\nwrk.headers["Content-Type"]="application/json"\nlocal f=io.open("%s","rb")\nwrk.body=f:read("*a")\nf:close()\n' "$body" > "$script"
config_env=()
if [ "${COMPARE_DEFAULTS:-}" = 1 ]; then
  config=$(mktemp --suffix .json)
  printf '{"destinations":{"worker":{"pull":true}},"sources":{"stripe":{"forward":[{"to":"worker","filter":{"eventType":{"$ne":"ping"}}}]}}}' > "$config"
  config_env=(RECEPTION_CONFIG="$config")
fi
port=47400
for round in $(seq 1 "$rounds"); do
  for pair in "$@"; do
    name=${pair%%=*}; dir=${pair#*=}; port=$((port + 1))
    data=$(mktemp -d)
    env "${config_env[@]}" RECEPTION_DATA="$data" RECEPTION_TOKEN=compare-builds-token-0123456789 RECEPTION_PORT=$port \
      node "$dir/dist/src/main.js" > "$data/log" 2>&1 &
    pid=$!
    for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
    wrk -t1 -c50 -d3s -s "$script" "http://127.0.0.1:$port/api/webhook/stripe" > /dev/null
    before=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    out=$(wrk -t1 -c50 -d10s --latency -s "$script" "http://127.0.0.1:$port/api/webhook/stripe")
    after=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    kill "$pid"; wait "$pid" 2>/dev/null || true; rm -rf "$data"
    requests=$(echo "$out" | awk '/requests in/ {print $1}')
    rate=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
    p99=$(echo "$out" | awk '$1 == "99%" {print $2}')
    tick=$(getconf CLK_TCK)
    echo "round $round  $name  $rate req/s  p99 $p99  $(awk -v t=$((after - before)) -v n="$requests" -v k="$tick" 'BEGIN {printf "%.1f", t * 1e6 / k / n}') us CPU per request"
  done
done
rm -f "$body" "$script" ${config:+"$config"}
