#!/usr/bin/env bash
# Three relay nodes on a three-server JetStream cluster, all on loopback: the README's
# "Running several relays" example. Ports come from the environment (defaults below); Ctrl-C,
# SIGTERM or any one process dying stops them all. Needs nats-server (Debian: apt-get install
# nats-server) and a built CLI (npm ci builds it).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${AEP_TOKEN:?set AEP_TOKEN: the relays share one token}"
read -r -a NATS_PORTS <<< "${NATS_PORTS:-4222 4223 4224}"
read -r -a ROUTE_PORTS <<< "${ROUTE_PORTS:-6222 6223 6224}"
read -r -a RELAY_PORTS <<< "${RELAY_PORTS:-8787 8788 8789}"
DATA="${DATA_DIR:-$(mktemp -d -t aep-fabric-XXXXXX)}"

pids=()
stop() {
  trap - EXIT INT TERM
  kill "${pids[@]}" 2>/dev/null || true
  wait 2>/dev/null || true
}
trap stop EXIT INT TERM

routes=""
for p in "${ROUTE_PORTS[@]}"; do routes="${routes:+$routes,}nats://127.0.0.1:$p"; done
servers=""
for p in "${NATS_PORTS[@]}"; do servers="${servers:+$servers,}nats://127.0.0.1:$p"; done

for i in 0 1 2; do
  nats-server -js -a 127.0.0.1 -p "${NATS_PORTS[$i]}" -sd "$DATA/nats-$i" -n "nats-$i" \
    --cluster_name aep --cluster "nats://127.0.0.1:${ROUTE_PORTS[$i]}" --routes "$routes" >"$DATA/nats-$i.log" 2>&1 &
  pids+=($!)
done
for i in 0 1 2; do
  node bin/aep-steer.js relay --port "${RELAY_PORTS[$i]}" --token "$AEP_TOKEN" --nats "$servers" --nats-replicas 3 &
  pids+=($!)
done
echo "relays: ws://127.0.0.1:${RELAY_PORTS[0]}/socket ws://127.0.0.1:${RELAY_PORTS[1]}/socket ws://127.0.0.1:${RELAY_PORTS[2]}/socket (JetStream $servers, data in $DATA)"
wait -n
