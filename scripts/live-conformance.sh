#!/usr/bin/env bash
# Runs the AEP standard's live endpoint checker (conformance/live.js, agent-event-protocol at
# 1d959a0) against freshly started relays: once without a token (development posture, covers
# control-auth-gate) and once with a token, a small replay buffer (--evict) and a
# control-capable stub target (--control-session, --control-cancel), once more with this
# project's Claude Code adapter runtime as the control target, and once with the Cline adapter
# runtime (its hub replaced by a stand-in that answers run.abort as Cline 3.0.65 does) for
# control-cancel.
# live.js is not part of this project; point AEP_LIVE_JS at a copy, or clone the standard into
# .cache/aep-standard (git-ignored):
#   git clone https://github.com/agenteventprotocol/agent-event-protocol .cache/aep-standard
#   git -C .cache/aep-standard checkout 1d959a0
set -euo pipefail
cd "$(dirname "$0")/.."

live="${AEP_LIVE_JS:-.cache/aep-standard/conformance/live.js}"
if [[ ! -f "$live" ]]; then
  echo "live-conformance: no live.js at $live (set AEP_LIVE_JS or clone the standard, see this script's header)" >&2
  [[ "${CI:-}" == "true" ]] && exit 1
  exit 0
fi

work="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
# The checker is CommonJS; this project's package.json says "type": "module".
cp "$live" "$work/live.cjs"
# Node 20 has WebSocket only behind this flag (without it the WS checks give false results).
export NODE_OPTIONS="--experimental-websocket"

base=""
start_stack() { # args for test/support/live-stack.ts; sets $base (runs in this shell so cleanup sees the pid)
  local out="$work/stack-$RANDOM"
  NODE_OPTIONS= node --import tsx test/support/live-stack.ts "$@" >"$out" 2>"$out.err" &
  pids+=($!)
  for _ in $(seq 1 100); do
    if [[ -s "$out" ]]; then base="$(sed -n 's/.*"url":"\([^"]*\)".*/\1/p' "$out" | head -1)"; return 0; fi
    sleep 0.1
  done
  echo "live-conformance: relay did not start: $(cat "$out.err")" >&2
  return 1
}

summary() { node -e 'const r=JSON.parse(require("fs").readFileSync(0,"utf8"));for(const c of r.checks)console.log(`${c.status.toUpperCase().padEnd(5)} ${c.name}${c.detail?" — "+c.detail:""}`);const s=r.summary;console.log(`${process.argv[1]}: ${s.pass} pass, ${s.fail} fail, ${s.skip} skip`);process.exit(r.ok?0:1)' "$1"; }

status=0
start_stack
node "$work/live.cjs" "$base" --timeout 4000 --json - 2>"$work/live1.err" | summary "open relay (no token)" || { status=1; cat "$work/live1.err" >&2; }

token="live-$RANDOM$RANDOM"
start_stack --token "$token" --buffer 8 --session s_ctl --run r_ctl
node "$work/live.cjs" "$base" --timeout 4000 --token "$token" --control-session s_ctl --control-cancel r_ctl --ack-window 1500 --evict --json - 2>"$work/live2.err" \
  | summary "token, buffer 8, control target" || { status=1; cat "$work/live2.err" >&2; }
start_stack --token "$token" --adapter claude-code --session s_cc
node "$work/live.cjs" "$base" --timeout 4000 --token "$token" --control-session s_cc --ack-window 1500 --json - 2>"$work/live3.err" \
  | summary "token, Claude Code adapter as the control target" || { status=1; cat "$work/live3.err" >&2; }
start_stack --token "$token" --adapter cline --session s_cline
run="$(sed -n 's/.*"run":"\([^"]*\)".*/\1/p' "$work"/stack-* | tail -1)"
node "$work/live.cjs" "$base" --timeout 4000 --token "$token" --control-session s_cline --control-cancel "$run" --ack-window 1500 --json - 2>"$work/live4.err" \
  | summary "token, Cline adapter runtime (stand-in hub) as the control target" || { status=1; cat "$work/live4.err" >&2; }
exit $status
