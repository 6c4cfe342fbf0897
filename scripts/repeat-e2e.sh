#!/bin/sh
# Runs one end-to-end suite again and again, one run at a time, printing each run's result; stops
# at the first failure and keeps that run's whole output (the suite's own evidence included).
# usage: scripts/repeat-e2e.sh [RUNS] [FILTER]     e.g. scripts/repeat-e2e.sh 20 cline
#   RUNS    how many consecutive passes to reach (default 20)
#   FILTER  which test/e2e/*.e2e.ts file(s) (default cline)
#   AEP_REPEAT_DIR  where each run's output goes (default a new directory under $TMPDIR)
set -u
runs="${1:-20}"
filter="${2:-cline}"
cd "$(dirname "$0")/.." || exit 2
dir="${AEP_REPEAT_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/aep-repeat-e2e.XXXXXX")}"
mkdir -p "$dir"
echo "repeat-e2e: $runs runs of test/e2e/*$filter*.e2e.ts; output of each run in $dir"
# Built once: the suites run the sources through tsx; only the CLI they spawn runs dist/.
node scripts/build.mjs >"$dir/build.log" 2>&1 || { echo "repeat-e2e: build failed, see $dir/build.log"; exit 2; }
i=1
while [ "$i" -le "$runs" ]; do
  out="$dir/run-$i.log"
  start=$(date +%s)
  # The suites copy their evidence here (adapter state, hook trace, hub log); kept only for a failure.
  AEP_E2E_KEEP="$dir/run-$i.kept" node scripts/test.mjs test .e2e.ts --jobs 1 --timeout-ms 900000 --no-build "$filter" >"$out" 2>&1
  code=$?
  secs=$(( $(date +%s) - start ))
  result=$(grep -E '^(ok|FAIL|TIMEOUT)' "$out" | tr -s ' ' | tr '\n' ';')
  if [ "$code" -eq 0 ]; then
    rm -rf "$dir/run-$i.kept"
    echo "run $i/$runs: PASS ${secs}s $result"
  else
    echo "run $i/$runs: FAIL ${secs}s $result"
    echo "repeat-e2e: stopped at the first failure after $((i - 1)) consecutive passes; its output: $out; its evidence: $dir/run-$i.kept"
    tail -n 60 "$out"
    exit 1
  fi
  i=$((i + 1))
done
echo "repeat-e2e: $runs consecutive passes"
