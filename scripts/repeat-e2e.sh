#!/bin/sh
# Runs end-to-end suites again and again, one run at a time, printing each run's result; for each
# file it stops at the first failure and keeps that run's whole output (the suite's own evidence
# included), then goes on to the next file. With --load N, N busy processes run beside every run,
# so a set-up that races the machine's speed fails here rather than in CI.
# usage: scripts/repeat-e2e.sh [--load N] [RUNS] [FILTER]
#   e.g. scripts/repeat-e2e.sh 20 cline
#        scripts/repeat-e2e.sh --load 2 5 all      every test/e2e file, 5 runs each, 2 busy workers
#   RUNS    how many consecutive passes to reach per file (default 20)
#   FILTER  which test/e2e/*.e2e.ts file(s) (default cline), or one file's path; `all` runs each
#           file on its own
#   AEP_REPEAT_DIR  where each run's output goes (default a new directory under $TMPDIR)
set -u
load=0
if [ "${1:-}" = '--load' ]; then load="${2:-2}"; shift 2; fi
runs="${1:-20}"
filter="${2:-cline}"
cd "$(dirname "$0")/.." || exit 2
dir="${AEP_REPEAT_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/aep-repeat-e2e.XXXXXX")}"
mkdir -p "$dir"

if [ "$filter" = all ]; then
  files=$(ls test/e2e/*.e2e.ts)
elif [ -f "$filter" ]; then
  files="$filter"
else
  files=$(ls test/e2e/*"$filter"*.e2e.ts 2>/dev/null)
fi
[ -n "$files" ] || { echo "repeat-e2e: no test/e2e file matches $filter"; exit 2; }

# The busy workers: plain Node loops, so nothing needs installing; stopped however this script ends.
hogs=''
stop_hogs() { [ -z "$hogs" ] || kill $hogs 2>/dev/null; hogs=''; }
trap stop_hogs EXIT INT TERM
i=0
while [ "$i" -lt "$load" ]; do
  node -e 'for (;;) {}' &
  hogs="$hogs $!"
  i=$((i + 1))
done

echo "repeat-e2e: $runs runs of each of $(echo "$files" | wc -l) file(s), $load busy worker(s) beside; output in $dir"
# Built once: the suites run the sources through tsx; only the CLI they spawn runs dist/.
node scripts/build.mjs >"$dir/build.log" 2>&1 || { echo "repeat-e2e: build failed, see $dir/build.log"; exit 2; }
failed=0
summary=''
for file in $files; do
  name=$(basename "$file" .e2e.ts)
  i=1
  passes=0
  while [ "$i" -le "$runs" ]; do
    out="$dir/$name-run-$i.log"
    start=$(date +%s)
    # The suites copy their evidence here (adapter state, hook trace, hub log); kept only for a failure.
    AEP_E2E_KEEP="$dir/$name-run-$i.kept" node scripts/test.mjs test .e2e.ts --jobs 1 --timeout-ms 900000 \
      --no-build "$file" >"$out" 2>&1
    code=$?
    secs=$(($(date +%s) - start))
    result=$(grep -E '^(ok|FAIL|TIMEOUT)' "$out" | tr -s ' ' | tr '\n' ';')
    if [ "$code" -eq 0 ]; then
      rm -rf "$dir/$name-run-$i.kept"
      passes=$((passes + 1))
      echo "$name run $i/$runs: PASS ${secs}s $result"
    else
      echo "$name run $i/$runs: FAIL ${secs}s $result"
      echo "repeat-e2e: $name stopped after $passes consecutive passes; its output: $out; its evidence: $dir/$name-run-$i.kept"
      tail -n 60 "$out"
      failed=1
      break
    fi
    i=$((i + 1))
  done
  summary="$summary$name: $passes/$runs
"
done
echo "repeat-e2e summary ($load busy worker(s)):"
printf '%s' "$summary"
[ "$failed" -eq 0 ] || exit 1
echo "repeat-e2e: every file passed $runs runs in a row"
