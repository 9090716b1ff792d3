#!/usr/bin/env bash
# Nightly re-validation of every seal in a store on this GPU: exits 3 if any seal regressed
# (wrong on some config, or slower than when it was sealed beyond noise), 1 on other failures.
#   scripts/nightly.sh [--store FILE] [--arch sm90] [--report DIR]
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
forgek=${FORGEK:-$root/build/dev/forgek}
store_args=() arch=sm90 report=""
while (($#)); do
  case "$1" in
    --store) store_args=(--store "$2"); shift 2 ;;
    --arch) arch=$2; shift 2 ;;
    --report) report=$2; shift 2 ;;
    *) echo "usage: scripts/nightly.sh [--store FILE] [--arch sm90|sm100] [--report DIR]" >&2; exit 2 ;;
  esac
done
[[ -x "$forgek" ]] || { echo "nightly: $forgek not built (scripts/dev.sh test builds it, or set FORGEK)" >&2; exit 1; }
[[ -n "$report" ]] && mkdir -p "$report"

# One seal per operator: the newest (what the next run would take as its incumbent).
seals=$("$forgek" "${store_args[@]}" --arch "$arch" --json seal list | python3 -c '
import json, sys
seen = set()
for s in json.load(sys.stdin):
    if s["operator"] not in seen:
        seen.add(s["operator"]); print(s["id"])') || { echo "nightly: cannot list seals" >&2; exit 1; }

status=0 checked=0 regressed=0
for id in $seals; do
  checked=$((checked + 1))
  out=${report:+$report/$id.json}
  "$forgek" "${store_args[@]}" --arch "$arch" --json seal verify "$id" > "${out:-/dev/stdout}"
  rc=$?
  if ((rc == 3)); then regressed=$((regressed + 1)); status=3
  elif ((rc != 0)) && ((status == 0)); then status=1; fi
done
echo "nightly: $checked seals checked, $regressed regressed" >&2
exit $status
