#!/usr/bin/env bash
# Times one family at several param assignments against the operator's reference (GPU machine).
#   scripts/sweep.sh OP FAMILY.cu "P=1,Q=2" "P=2,Q=4" ...
# Each assignment is one `forgek eval` (correctness on 2 seeds, interleaved cold-L2 timing);
# per config it prints candidate and reference medians with their noise, and the speedup.
# FORGEK (default build/device/forgek) names the binary; SWEEP_FLAGS adds eval flags (--seeds 1);
# each eval is bounded to 90 s.
set -uo pipefail
if [[ $# -lt 3 ]]; then
  echo "usage: scripts/sweep.sh OP FAMILY.cu PARAMS..." >&2
  exit 2
fi
op=$1 kernel=$2
shift 2
forgek=${FORGEK:-build/device/forgek}
for params in "$@"; do
  echo "== $params"
  timeout 90 "$forgek" eval --op "$op" --kernel "$kernel" --params "$params" ${SWEEP_FLAGS:-} 2>&1 |
    grep -v '^forgek: info' | tail -n +2
done
