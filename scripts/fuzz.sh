#!/usr/bin/env bash
# Runs every fuzz target of the ci build (clang, sanitizers) for a bounded time over its seed corpus.
#   scripts/fuzz.sh [SECONDS_PER_TARGET]     (default 45; FORGEK_FUZZ_SECONDS overrides)
# Build them first: CI=true scripts/dev.sh test (or cmake --preset ci && cmake --build --preset ci).
# New inputs go to a scratch copy: tests/fuzz/corpus/ keeps only the checked-in seeds. A crash,
# leak, sanitizer report or timeout stops the script with the failing input saved beside it.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${1:-${FORGEK_FUZZ_SECONDS:-45}}
build="$root/build/ci"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

for target in operator_spec candidate_manifest expression llm_reply knowledge_import include_check; do
  bin="$build/fuzz_$target"
  [[ -x "$bin" ]] || { echo "fuzz: $bin is missing: build the ci preset first (CI=true scripts/dev.sh test)" >&2; exit 1; }
  mkdir -p "$work/$target" "$root/build/fuzz-findings/$target"
  cp "$root/tests/fuzz/corpus/$target/"* "$work/$target/"
  echo "fuzz: $target for ${seconds} s" >&2
  # -timeout: one input may take 10 s at most (a hang is a finding); -rss_limit_mb bounds memory.
  "$bin" "$work/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
         -artifact_prefix="$root/build/fuzz-findings/$target/" -print_final_stats=1 2>"$work/$target.log" || {
    tail -n 60 "$work/$target.log" >&2
    echo "fuzz: $target found a failing input; see build/fuzz-findings/$target/" >&2
    exit 1
  }
  grep -E "^stat::number_of_executed_units|^stat::new_units_added" "$work/$target.log" | sed "s/^/fuzz: $target /" >&2
done
echo "fuzz: every target ran ${seconds} s without a finding" >&2
