#!/bin/sh
# Command-hook shim (D15): reads one hook JSON on stdin, POSTs it to the adapter's hook URL and
# prints the reply. It fails open: if curl is missing, the adapter is down, slow or answers with
# anything but 200, it prints the vendor's neutral reply and exits 0, so the agent never waits on
# or breaks because of steering. Each hook it could not deliver leaves one line in the state
# directory's `hook-trace` (time, host:port, curl's exit code and HTTP status, why; never the
# secret), and `hook-unreachable` holds that line until a hook gets through again; the adapter,
# `aep-steer doctor` and the test harness read them (src/adapters/shim-trace.ts), so failing open
# is never silent afterwards.
#
# usage: aep-steer-hook.sh [-t TOTAL_SECONDS] [-c CONNECT_SECONDS] [-k SECRET_FILE] URL [NEUTRAL_REPLY]
#   URL            the adapter's hook URL (loopback, with the per-install secret path segment)
#   NEUTRAL_REPLY  what to print on failure, e.g. '{}' (default: nothing)
#   -t             total time limit (default 10; held loops need more than the attention timeout)
#   -c             connect time limit (default 1)
#   -k             read the secret from this file and append it to URL (D21: the installers write
#                  hook commands this way, so no settings file or process list shows the secret);
#                  the trace goes next to it
# AEP_HOOK_TRACE=all also traces every delivered hook (the end-to-end suites set it).

total=10
connect=1
secret_file=""
while [ $# -gt 0 ]; do
  case "$1" in
    -t) total="$2"; shift 2 ;;
    -c) connect="$2"; shift 2 ;;
    -k) secret_file="$2"; shift 2 ;;
    --) shift; break ;;
    *) break ;;
  esac
done
url="${1:-}"
neutral="${2:-}"
nl='
'

# The state directory: the secret file's, else the adapter's default (AEP_STATE_DIR, ~/.aep-steering).
if [ -n "$secret_file" ]; then
  state="${secret_file%/*}"
  [ "$state" = "$secret_file" ] && state=.
else
  state="${AEP_STATE_DIR:-${HOME:+$HOME/.aep-steering}}"
fi

# One line per hook, never the secret (only host:port of the URL); kept under 64 KiB by
# moving the full file to hook-trace.1. A trace that cannot be written costs the hook nothing.
trace() {
  [ -n "$state" ] && [ -d "$state" ] || return 0
  where="${url#*://}"
  where="${where%%/*}"
  where="${where:--}"
  file="$state/hook-trace"
  if [ -f "$file" ] && [ -n "$(find "$file" -size +64k 2>/dev/null)" ]; then
    mv -f "$file" "$file.1" 2>/dev/null
  fi
  line="$(date -u +%Y-%m-%dT%H:%M:%SZ) $where $1 $2"
  (umask 077 && printf '%s\n' "$line" >>"$file") 2>/dev/null
  # While the last hook failed, hook-unreachable holds its line (the next delivered hook removes it).
  case "$1" in
    ok*) ;;
    *) (umask 077 && printf '%s\n' "$line" >"$state/hook-unreachable") 2>/dev/null ;;
  esac
  return 0
}

neutral_exit() {
  [ -n "$neutral" ] && printf '%s\n' "$neutral"
  exit 0
}

# Without a URL or curl nothing reads the hook JSON: drain it so the vendor's write never fails.
skip() {
  cat >/dev/null 2>&1
  trace "skipped" "$1"
  neutral_exit
}

[ -n "$url" ] || skip "no adapter URL given to the shim: run \`aep-steer install <vendor>\` again"
command -v curl >/dev/null 2>&1 || skip "curl is not installed: install it, or use \`aep-steer hook <vendor>\` as the hook command"

if [ -n "$secret_file" ]; then
  secret=$(head -n 1 "$secret_file" 2>/dev/null) || skip "cannot read the hook secret $secret_file: run \`aep-steer install <vendor>\`"
  # One URL path segment of the secret's alphabet, or nothing is posted.
  case "$secret" in
    '' | *[!A-Za-z0-9_-]*) skip "no usable hook secret in $secret_file: run \`aep-steer install <vendor>\`" ;;
  esac
  url="$url$secret"
fi

# The reply is held in a variable so that nothing partial reaches the vendor on a failure; the
# HTTP status follows it on a line of its own.
out=$(curl --silent --fail --noproxy '*' \
  --connect-timeout "$connect" --max-time "$total" \
  -H 'content-type: application/json' --write-out "$nl%{http_code}" \
  --data-binary @- "$url" 2>/dev/null)
rc=$?
status="${out##*"$nl"}"
reply="${out%"$nl"*}"
[ "$reply" = "$out" ] && reply=""
while [ "${reply%"$nl"}" != "$reply" ]; do reply="${reply%"$nl"}"; done
if [ "$rc" -ne 0 ]; then
  case "$rc" in
    7) why="no adapter listening: start it with \`aep-steer adapter <vendor>\`" ;;
    28) why="the adapter did not answer within ${total} s" ;;
    22) case "$status" in
          404) why="the adapter does not know this hook secret: run \`aep-steer install <vendor>\` again, then restart the adapter" ;;
          *) why="the adapter answered HTTP $status" ;;
        esac ;;
    52 | 56) why="the adapter broke off its reply" ;;
    *) why="curl failed" ;;
  esac
  trace "failed curl=$rc http=$status" "$why; the agent got the neutral reply"
  neutral_exit
fi
[ "${AEP_HOOK_TRACE:-}" = all ] && trace "ok curl=0 http=$status" "delivered"
[ -n "$state" ] && [ -e "$state/hook-unreachable" ] && rm -f "$state/hook-unreachable"

if [ -n "$reply" ]; then
  printf '%s\n' "$reply"
else
  neutral_exit
fi
exit 0
