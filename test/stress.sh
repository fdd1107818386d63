#!/usr/bin/env bash
# The flakiness proof: `npm test` RUNS times in a row (default 20) with HOGS busy loops (default 1)
# beside it, stopping at the first failure. The suite runs two to four test files at a time, so on a 2-core
# machine one hog keeps both cores oversubscribed: timing assumptions that hold on an idle machine
# break here first. Usage: npm run test:stress [-- RUNS [HOGS]]; run it from an idle, built checkout
# (or a fresh clone after `bash .ci/run`). Each run's whole output is kept in test-output/stress/,
# one summary line per run goes to stdout and to test-output/stress/results.txt.
set -u
runs="${1:-20}"
hogs="${2:-1}"
case "$runs,$hogs" in *[!0-9,]* | ,* | *, | 0,*)
  echo "usage: npm run test:stress [-- RUNS [HOGS]]  (RUNS at least 1, HOGS 0 or more; defaults 20 and 1)" >&2
  exit 2 ;;
esac
cd "$(dirname "$0")/.."
out=test-output/stress
mkdir -p "$out"

# Job control gives each background job a process group of its own, so a signal to this script can
# stop the running suite's whole tree (npm, node --test, its CLIs and embedded clusters) at once;
# and the suite runs in the background, waited for, because bash runs a trap only between commands.
set -m
hog_pids=()
suite_pid=""
stop_all() {
  [ -n "$suite_pid" ] && kill -- "-$suite_pid" 2>/dev/null
  [ "${#hog_pids[@]}" -gt 0 ] && kill "${hog_pids[@]}" 2>/dev/null
  suite_pid=""; hog_pids=()
}
trap stop_all EXIT
trap 'stop_all; exit 130' INT
trap 'stop_all; exit 143' TERM
for _ in $(seq 1 "$hogs"); do
  node -e 'for (;;) {}' &
  hog_pids+=("$!")
done

log() { echo "$*" | tee -a "$out/results.txt"; }
log "stress: $runs runs of npm test on $(git log --oneline -1 2>/dev/null | cut -c1-7) beside $hogs busy loop(s), $(nproc) cores, started $(date -u +%FT%TZ)"
for i in $(seq 1 "$runs"); do
  started=$(date +%s)
  npm test > "$out/run-$i.log" 2>&1 &
  suite_pid=$!
  wait "$suite_pid"
  rc=$?
  suite_pid=""
  # node:test's closing counts, e.g. "# tests 1022 # pass 1018 # fail 0 # skipped 4"
  counts=$(grep -E '^# (tests|pass|fail|skipped) ' "$out/run-$i.log" | tr '\n' ' ')
  log "run $i rc=$rc $(( $(date +%s) - started ))s ${counts}load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null) $(date -u +%TZ)"
  if [ "$rc" -ne 0 ]; then
    log "stress: run $i failed; its output: $out/run-$i.log"
    exit 1
  fi
done
log "stress: all $runs runs passed"
