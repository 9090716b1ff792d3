#!/usr/bin/env bash
# The GPU machine's test run: the `gpu`-labelled tests plus a few timed commands, then a short table.
#   scripts/device-test.sh [BIN_DIR]      BIN_DIR holds forgek and forgek_tests (default build/device)
# Run from the repository root (operators/ and tests/worker/planted/ are read from there).
# To add a step, add one line to STEPS below: "name|command". Output of every step goes to
# $OUT (or ./device-test-out) as NAME.log; the table shows pass/fail/skip and seconds.
set -uo pipefail
bin=${1:-build/device}
out=${OUT:-device-test-out}
mkdir -p "$out"
export FORGEK_BIN="$PWD/$bin/forgek"
export FORGEK_OPERATORS="$PWD/operators"
export XDG_CACHE_HOME="$PWD/$out/cache"

STEPS=(
  "probe|$bin/forgek worker --probe"
  "calibrate|$bin/forgek worker --calibrate"
  "gpu-tests|$bin/forgek_tests --gtest_filter='Gpu*' --gtest_color=no"
  "eval-softmax-seed|$bin/forgek --json eval --op softmax_fp32 --kernel operators/softmax_fp32/seed.cu"
  "eval-softmax-seed-cached|$bin/forgek --json eval --op softmax_fp32 --kernel operators/softmax_fp32/seed.cu"
)

rows=()
for step in "${STEPS[@]}"; do
  name=${step%%|*}
  cmd=${step#*|}
  start=$(date +%s.%N)
  bash -c "$cmd" >"$out/$name.log" 2>&1
  rc=$?
  secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN{print b-a}')
  status=pass
  [[ $rc -ne 0 ]] && status="FAIL($rc)"
  rows+=("$(printf '%-28s %-9s %7.2f' "$name" "$status" "$secs")")
  # Individual gtest results, one row each.
  if [[ $name == gpu-tests ]]; then
    while read -r line; do
      t=$(sed -E 's/^\[ *([A-Z]+) *\] ([^ ]+) \(([0-9]+) ms\).*/\1 \2 \3/' <<<"$line")
      read -r res test ms <<<"$t"
      rows+=("$(printf '  %-52s %-9s %7.2f' "$test" "$res" "$(awk -v m="$ms" 'BEGIN{print m/1000}')")")
    done < <(grep -E '^\[ *(OK|FAILED|SKIPPED) *\] [A-Za-z0-9_]+\.[A-Za-z0-9_/]+ \([0-9]+ ms\)' "$out/$name.log")
  fi
done

echo "== device test $(date -u +%FT%TZ) on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
printf '%s\n' "${rows[@]}"
echo "== measurements"
grep -h '^\[ \(peaks\|copy\|eval\|planted\|golden\) ' "$out"/*.log 2>/dev/null
for f in "$out"/calibrate.log "$out"/eval-softmax-seed.log "$out"/eval-softmax-seed-cached.log; do
  [[ -f $f ]] && { echo "-- $(basename "$f")"; tail -c 1500 "$f"; echo; }
done
