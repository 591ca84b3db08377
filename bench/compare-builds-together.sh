#!/usr/bin/env bash
# Compares two built checkouts of Reception at 1 KiB JSON, durability full,
# as bench/compare-builds.sh does, but running both at the same time, each
# under its own wrk (-c50, 3 s of warm-up, then 10 s), so that each round's
# two figures see the same machine at the same moments. On a machine that
# others load, the CPU per request of one build moves by 20 % from round to
# round; the difference between the two builds within a round moves far
# less. Run it once with the same DIR twice (an A/A round) to see what the
# two slots differ by on their own.
#
#   bench/compare-builds-together.sh ROUNDS NAME=DIR NAME=DIR
#
# DIR is a checkout built with `npx tsc -p tsconfig.json && node scripts/copy-assets.mjs`.
# COMPARE_DEFAULTS=1: the config of the bench's `reception defaults` case, as in compare-builds.sh.
set -euo pipefail
rounds=$1
pairs=("$2" "$3")
body=$(mktemp); script=$(mktemp --suffix .lua)
node -e 'process.stdout.write(JSON.stringify({type:"invoice.paid",data:{object:{id:"in_1",pad:"x".repeat(900)}}}))' > "$body"
printf 'wrk.method="POST"\nwrk.headers["Content-Type"]="application/json"\nlocal f=io.open("%s","rb")\nwrk.body=f:read("*a")\nf:close()\n' "$body" > "$script"
config_env=()
if [ "${COMPARE_DEFAULTS:-}" = 1 ]; then
  config=$(mktemp --suffix .json)
  printf '{"destinations":{"worker":{"pull":true}},"sources":{"stripe":{"forward":[{"to":"worker","filter":{"eventType":{"$ne":"ping"}}}]}}}' > "$config"
  config_env=(RECEPTION_CONFIG="$config")
fi
tick=$(getconf CLK_TCK)
# Below the ephemeral range (32768-60999 on Linux), where wrk's own connections could hold the next port.
port=${COMPARE_PORT:-27600}
for round in $(seq 1 "$rounds"); do
  pids=(); dirs=(); ports=(); names=()
  for pair in "${pairs[@]}"; do
    port=$((port + 1)); data=$(mktemp -d)
    env "${config_env[@]}" RECEPTION_DATA="$data" RECEPTION_TOKEN=compare-builds-token-0123456789 RECEPTION_PORT=$port \
      node "${pair#*=}/dist/src/main.js" > "$data/log" 2>&1 &
    pids+=($!); dirs+=("$data"); ports+=("$port"); names+=("${pair%%=*}")
  done
  for p in "${ports[@]}"; do
    for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && break; sleep 0.1; done
  done
  loads=()
  for i in 0 1; do wrk -t1 -c50 -d3s -s "$script" "http://127.0.0.1:${ports[$i]}/api/webhook/stripe" > /dev/null & loads+=($!); done
  wait "${loads[@]}"
  before=(); loads=()
  for i in 0 1; do before+=("$(awk '{print $14 + $15}' "/proc/${pids[$i]}/stat")"); done
  for i in 0 1; do
    wrk -t1 -c50 -d10s -s "$script" "http://127.0.0.1:${ports[$i]}/api/webhook/stripe" > "${dirs[$i]}/wrk" & loads+=($!)
  done
  wait "${loads[@]}"
  for i in 0 1; do
    after=$(awk '{print $14 + $15}' "/proc/${pids[$i]}/stat")
    requests=$(awk '/requests in/ {print $1}' "${dirs[$i]}/wrk")
    rate=$(awk '/Requests\/sec/ {print $2}' "${dirs[$i]}/wrk")
    echo "round $round  ${names[$i]}  $rate req/s  $(awk -v t=$((after - before[i])) -v n="$requests" -v k="$tick" 'BEGIN {printf "%.1f", t * 1e6 / k / n}') us CPU per request"
  done
  for i in 0 1; do kill "${pids[$i]}"; wait "${pids[$i]}" 2>/dev/null || true; rm -rf "${dirs[$i]}"; done
done
rm -f "$body" "$script" ${config:+"$config"}
