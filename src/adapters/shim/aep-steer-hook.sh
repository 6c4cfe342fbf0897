#!/bin/sh
# Command-hook shim (D15): reads one hook JSON on stdin, POSTs it to the adapter's hook URL and
# prints the reply. It fails open: if curl is missing, the adapter is down, slow or answers with
# anything but 200, it prints the vendor's neutral reply and exits 0, so the agent never waits on
# or breaks because of steering.
#
# usage: aep-steer-hook.sh [-t TOTAL_SECONDS] [-c CONNECT_SECONDS] [-k SECRET_FILE] URL [NEUTRAL_REPLY]
#   URL            the adapter's hook URL (loopback, with the per-install secret path segment)
#   NEUTRAL_REPLY  what to print on failure, e.g. '{}' (default: nothing)
#   -t             total time limit (default 10; held loops need more than the attention timeout)
#   -c             connect time limit (default 1)
#   -k             read the secret from this file and append it to URL (D21: the installers write
#                  hook commands this way, so no settings file or process list shows the secret)

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

neutral_exit() {
  [ -n "$neutral" ] && printf '%s\n' "$neutral"
  exit 0
}

# Without a URL or curl nothing reads the hook JSON: drain it so the vendor's write never fails.
skip() {
  cat >/dev/null 2>&1
  neutral_exit
}

[ -n "$url" ] || skip
command -v curl >/dev/null 2>&1 || skip

if [ -n "$secret_file" ]; then
  secret=$(head -n 1 "$secret_file" 2>/dev/null) || skip
  # One URL path segment of the secret's alphabet, or nothing is posted.
  case "$secret" in
    '' | *[!A-Za-z0-9_-]*) skip ;;
  esac
  url="$url$secret"
fi

# The reply is held in a variable so that nothing partial reaches the vendor on a failure.
reply=$(curl --silent --fail --noproxy '*' \
  --connect-timeout "$connect" --max-time "$total" \
  -H 'content-type: application/json' \
  --data-binary @- "$url" 2>/dev/null) || neutral_exit

if [ -n "$reply" ]; then
  printf '%s\n' "$reply"
else
  neutral_exit
fi
exit 0
